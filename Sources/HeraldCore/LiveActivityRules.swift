import Foundation

/// Limits of the Live Activity endpoints; the defaults are the API's and Apple's
/// (docs/live-activities.md lists them). Text lengths count Unicode scalars, as pushes do.
public struct LiveActivityRules: Sendable {
    /// What `ttlSeconds` may be: 1 second to 8 hours.
    public var ttlRange = 1...28_800
    public var defaultTTLSeconds = 1_800
    /// Apple ends an activity 8 hours after its start: no TTL reaches past that.
    public var maxDuration: TimeInterval = 8 * 3600
    /// `dismissAt` at most 4 h after the end (Apple keeps an ended activity up to 4 h); also the
    /// dismissal of an end sent without one, so Android keeps the card as long as iOS does.
    public var maxDismissalDelay: TimeInterval = 4 * 3600
    /// `relevanceScore`: how the host's several activities are ordered (highest in the Dynamic Island).
    /// A whole number so partners compare on one scale; an activity started without one has the middle.
    public var relevanceScoreRange = 0...100
    public var defaultRelevanceScore = 50

    public var titleLength = 1...120
    public var maxSubtitleCharacters = 120
    /// How many stages a progress activity has (a template rule: 422 outside it).
    public var stageCount = 1...8
    public var stageNameLength = 1...40
    public var maxStatusTextCharacters = 200
    public var statusLabelLength = 1...60
    public var maxFootnoteCharacters = 200
    public var alertTitleLength = 1...120
    public var maxAlertBodyCharacters = 1_000

    /// How far ahead a start may be scheduled (`startAt`), as a push's `sendAt`.
    public var maxScheduleAhead: TimeInterval = 7 * 24 * 3600
    /// A `startAt` at most this far ahead is sent at once: a sweep could not send it sooner.
    public var scheduleLead: TimeInterval = 5

    public init() {}

    /// When a start with `startAt` is sent: nil for "now" (no `startAt`, one in the past or within `scheduleLead`
    /// of `now`), else `startAt`. One more than `maxScheduleAhead` ahead is 422 `start_at_out_of_range`: a valid time
    /// that breaks a rule, as a push's `sendAt` out of range is.
    public func scheduledStart(_ startAt: Date?, now: Date) throws(HeraldError) -> Date? {
        guard let startAt, startAt.timeIntervalSince(now) > scheduleLead else { return nil }
        guard startAt.timeIntervalSince(now) <= maxScheduleAhead else {
            throw .ruleViolated(
                "start_at_out_of_range", "startAt may be at most \(Int(maxScheduleAhead / 86400)) days ahead.",
                field: "startAt")
        }
        return startAt
    }

    /// The expiry a start or an update with `ttlSeconds` sets: `ttlSeconds` from `now`. An update may
    /// extend the TTL only within Apple's bound, `maxDuration` after the start: one reaching past it is
    /// 422 `ttl_beyond_limit` (refused, not cut short, so the partner knows what it got).
    public func expiresAt(startedAt: Date, now: Date, ttlSeconds: Int) throws(HeraldError) -> Date {
        let expiresAt = now.addingTimeInterval(TimeInterval(ttlSeconds))
        let limit = startedAt.addingTimeInterval(maxDuration)
        guard expiresAt <= limit else {
            throw .ruleViolated(
                "ttl_beyond_limit",
                "An activity lasts at most \(Int(maxDuration / 3600)) hours from its start; ttlSeconds may be at most \(max(0, Int(limit.timeIntervalSince(now)))) now.",
                field: "ttlSeconds")
        }
        return expiresAt
    }

    /// The dismissal date of an end at `endedAt`: the partner's `dismissAt` (one in the past means
    /// "at once", so it becomes `endedAt`), else `maxDismissalDelay` after the end. A `dismissAt`
    /// later than that is 422 `dismiss_at_out_of_range`.
    public func dismissalDate(requested: Date?, endedAt: Date) throws(HeraldError) -> Date {
        let latest = endedAt.addingTimeInterval(maxDismissalDelay)
        guard let requested else { return latest }
        guard requested <= latest else {
            throw .ruleViolated(
                "dismiss_at_out_of_range",
                "dismissAt may be at most \(Int(maxDismissalDelay / 3600)) hours after the end.", field: "dismissAt")
        }
        return max(requested, endedAt)
    }

    /// Checks one text field: its length in Unicode scalars, no control, separator or
    /// bidirectional formatting characters (`TextRules`) other than `allowed`, and, unless
    /// `blankAllowed`, not only whitespace. Every failure is 400 `invalid_field` naming `field`.
    func text(
        _ text: String, field: String, length: ClosedRange<Int>, allowing allowed: Set<Unicode.Scalar> = [],
        blankAllowed: Bool = false
    ) throws(HeraldError) -> String {
        let count = text.unicodeScalars.count
        guard length.contains(count) else {
            throw .invalidField(
                field,
                length.lowerBound == 0
                    ? "\(field) must be at most \(length.upperBound) characters."
                    : "\(field) must be \(length.lowerBound)-\(length.upperBound) characters.")
        }
        guard !TextRules.containsForbidden(text, allowing: allowed) else {
            throw .invalidField(
                field,
                allowed.isEmpty
                    ? "\(field) must not contain control, separator, bidirectional formatting or invisible characters."
                    : "\(field) must not contain control, bidirectional formatting or invisible characters other "
                        + "than newlines and tabs.")
        }
        guard blankAllowed || !text.unicodeScalars.allSatisfy(\.properties.isWhitespace) else {
            throw .invalidField(field, "\(field) must not be blank.")
        }
        return text
    }
}
