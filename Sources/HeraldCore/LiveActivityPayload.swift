import Foundation

/// Everything one Live Activity event's payloads need.
public struct LiveActivityContent: Sendable {
    public var activityID: UUID
    public var miniAppID: String
    public var displayName: String
    public var template: LiveActivityTemplate
    public var attributes: LiveActivityAttributes
    public var state: LiveActivityState
    public var event: LiveActivityEvent
    /// `aps.timestamp` (UNIX seconds), chosen by the caller strictly increasing per activity.
    public var timestamp: Int
    /// The activity's expiry (TTL): iOS `stale-date`, Android `expiresAt`.
    public var expiresAt: Date
    /// End only: iOS `dismissal-date`, Android `dismissAt`.
    public var dismissalDate: Date?
    /// The alert to show (nil = silent). On start the caller passes the partner's alert or one
    /// made from the attributes (`LiveActivityPayload.startAlert`); a start without one gets the latter.
    public var alert: LiveActivityAlert?
    /// Start and update only: iOS `relevance-score`, Android `relevanceScore` (0-100). iOS puts the
    /// activity with the highest score in the Dynamic Island and orders the Lock Screen by it, so a
    /// user with several mini-apps' activities sees the one that matters most first.
    public var relevanceScore: Int?
    /// Sent at once although silent (APNs priority 10, FCM HIGH): the end of a replaced activity, whose
    /// card must leave the screen when the new one arrives.
    public var immediate: Bool
    /// Start only: the APNs broadcast channel the started activity follows (`input-push-channel`) instead of an
    /// update token of its own (`input-push-token`).
    public var inputPushChannel: String?
    /// The activity's user's locale, which picks the alert's `localized` variant; nil: the default text (a
    /// broadcast, whose phones are not known).
    public var locale: String?

    public init(
        activityID: UUID, miniAppID: String, displayName: String, template: LiveActivityTemplate,
        attributes: LiveActivityAttributes, state: LiveActivityState, event: LiveActivityEvent, timestamp: Int,
        expiresAt: Date, dismissalDate: Date? = nil, alert: LiveActivityAlert? = nil, relevanceScore: Int? = nil,
        immediate: Bool = false, inputPushChannel: String? = nil
    ) {
        self.activityID = activityID
        self.miniAppID = miniAppID
        self.displayName = displayName
        self.template = template
        self.attributes = attributes
        self.state = state
        self.event = event
        self.timestamp = timestamp
        self.expiresAt = expiresAt
        self.dismissalDate = dismissalDate
        self.alert = alert
        self.relevanceScore = relevanceScore
        self.immediate = immediate
        self.inputPushChannel = inputPushChannel
    }
}

/// The two payloads of one Live Activity event, exactly as the worker sends them.
public struct RenderedLiveActivity: Sendable {
    /// The APNs body.
    public let apns: [UInt8]
    /// 10 with an alert (always on start) or when immediate, 5 silent.
    public let apnsPriority: Int
    /// The FCM v1 message without `token` and `android.ttl` (the worker adds both, as for pushes).
    public let fcm: [UInt8]
    /// FCM counts the bytes of data keys and values against its 4,096-byte limit.
    public let fcmDataBytes: Int
    /// Bytes of the parts a partner controls, so a size error names the one to shrink:
    /// the content-state, the attributes (0 unless start) and the alert's title and body.
    public let stateBytes: Int
    public let attributesBytes: Int
    public let alertBytes: Int
}

/// Renders Live Activity events for both platforms (docs/live-activity-payloads.md shows every shape).
///
/// iOS: `{"aps":{"timestamp","event","content-state", start: "attributes-type","attributes",
/// "input-push-token":1, "stale-date" (start, update) | "dismissal-date" (end),
/// "relevance-score" (start, update), "alert"?},
/// "activityId","miniAppId"}`. ActivityKit consumes the push itself, so no app code could check
/// a signature: the iOS body carries none.
///
/// Android: `{"android":{"priority","collapse_key":<activityId>},"data":{...}}`, every value a
/// string, signed like pushes (`SignedEnvelope` over every other data pair, then `kid`, `sig`).
/// Each message carries the attributes too, so a collapsed start or a lost message leaves the
/// phone with all it needs to draw the card, and what Android 16 needs to promote it to a Live
/// Update (`AndroidLiveUpdate`).
public enum LiveActivityPayload {
    public static let maxAPNsBytes = 4096
    public static let maxFCMDataBytes = 4096
    public static let androidChannel = "mini-app-live"

    public static func render(_ content: LiveActivityContent, signer: any PayloadSigner) -> RenderedLiveActivity {
        let isStart = content.event == .start
        // Apple requires an alert on a remote start.
        let alert = isStart ? startAlert(content.alert, attributes: content.attributes) : content.alert
        let shown = alert.map { alert in
            let text = alert.text(for: content.locale)
            return LiveActivityAlert(title: "[\(content.displayName)] \(text.title)", body: text.body)
        }
        let activityID = content.activityID.uuidString.lowercased()
        let contentState = content.state.contentState(displayName: content.displayName, miniAppID: content.miniAppID)
        let attributes = attributesPayload(content, activityID: activityID)
        let stateText = JSONWriter.string(contentState)
        let attributesText = JSONWriter.string(attributes)

        var aps: [(key: String, value: JSONValue)] = [
            ("timestamp", .number(Double(content.timestamp))),
            ("event", .string(content.event.rawValue)),
            ("content-state", contentState),
        ]
        if isStart {
            aps.append(("attributes-type", .string(content.template.attributesType)))
            aps.append(("attributes", attributes))
            if let channel = content.inputPushChannel {
                aps.append(("input-push-channel", .string(channel)))
            } else {
                aps.append(("input-push-token", .number(1)))
            }
        }
        if content.event == .end {
            if let dismissal = content.dismissalDate { aps.append(("dismissal-date", .number(unixSeconds(dismissal)))) }
        } else {
            aps.append(("stale-date", .number(unixSeconds(content.expiresAt))))
        }
        let relevance = content.event == .end ? nil : content.relevanceScore
        if let relevance { aps.append(("relevance-score", .number(Double(relevance)))) }
        if let shown { aps.append(("alert", shown.json)) }
        let apns = JSONValue.object([
            ("aps", .object(aps)), ("activityId", .string(activityID)), ("miniAppId", .string(content.miniAppID)),
        ])

        var data: [(key: String, value: String)] = [
            ("channel", androidChannel),
            ("miniAppId", content.miniAppID),
            ("activityId", activityID),
            ("template", content.template.rawValue),
            ("event", content.event.rawValue),
            ("state", stateText),
            ("attributes", attributesText),
            ("displayName", content.displayName),
            ("expiresAt", ISO8601.format(content.expiresAt)),
            ("timestamp", String(content.timestamp)),
        ]
        if let relevance { data.append(("relevanceScore", String(relevance))) }
        if content.event == .end, let dismissal = content.dismissalDate {
            data.append(("dismissAt", ISO8601.format(dismissal)))
        }
        data.append(contentsOf: AndroidLiveUpdate(state: content.state, event: content.event).dataPairs)
        if let shown {
            data.append(("alertTitle", shown.title))
            data.append(("alertBody", shown.body))
        }
        let urgent = shown != nil || content.immediate
        let signature = signer.signature(for: SignedEnvelope.canonicalBytes(data))
        data.append(("kid", signer.keyID))
        data.append(("sig", signature))
        let fcm = JSONValue.object([
            (
                "android",
                .object([
                    ("priority", .string(urgent ? "HIGH" : "NORMAL")), ("collapse_key", .string(activityID)),
                ])
            ),
            ("data", .object(data.map { ($0.key, JSONValue.string($0.value)) })),
        ])

        return RenderedLiveActivity(
            apns: JSONWriter.bytes(apns), apnsPriority: urgent ? 10 : 5, fcm: JSONWriter.bytes(fcm),
            fcmDataBytes: data.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count },
            stateBytes: stateText.utf8.count, attributesBytes: isStart ? attributesText.utf8.count : 0,
            alertBytes: shown.map { $0.title.utf8.count + $0.body.utf8.count } ?? 0)
    }

    /// 422 `payload_too_large` when either payload is over its limit, naming the overflow and the
    /// largest part the partner controls as the field: `state`, `attributes` (on start) or `alert`.
    /// Sizes do not depend on the device: ids, timestamps and signatures have fixed lengths.
    public static func checkSize(_ rendered: RenderedLiveActivity, event: LiveActivityEvent) throws(HeraldError) {
        var parts = [("state", rendered.stateBytes), ("alert", rendered.alertBytes)]
        if event == .start { parts.insert(("attributes", rendered.attributesBytes), at: 1) }
        // The first of the largest: state wins a tie.
        let field = parts.reduce(parts[0]) { $1.1 > $0.1 ? $1 : $0 }.0
        if rendered.apns.count > maxAPNsBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered APNs payload is \(rendered.apns.count) bytes, \(rendered.apns.count - maxAPNsBytes) over the \(maxAPNsBytes)-byte limit.",
                field: field)
        }
        if rendered.fcmDataBytes > maxFCMDataBytes {
            throw .ruleViolated(
                "payload_too_large",
                "The rendered FCM data is \(rendered.fcmDataBytes) bytes, \(rendered.fcmDataBytes - maxFCMDataBytes) over the \(maxFCMDataBytes)-byte limit.",
                field: field)
        }
    }

    /// Renders every `localized` variant of the content's alert and checks its size (`checkSize`), so the variant a
    /// user gets fits whatever the user's locale.
    public static func checkVariants(_ content: LiveActivityContent, signer: any PayloadSigner) throws(HeraldError) {
        for variant in content.alert?.localized ?? [] {
            var localized = content
            localized.locale = variant.tag
            try checkSize(render(localized, signer: signer), event: content.event)
        }
    }

    /// The alert a start shows: the partner's, else one from the attributes (title, and the
    /// subtitle or "" as the body).
    public static func startAlert(_ alert: LiveActivityAlert?, attributes: LiveActivityAttributes) -> LiveActivityAlert
    {
        alert ?? LiveActivityAlert(title: attributes.title, body: attributes.subtitle ?? "")
    }

    /// The app's attributes struct as JSON (default `JSONDecoder` strategies, like the content-state).
    /// What an app needs to start the activity itself (`Activity.request`, e.g. to follow a broadcast channel):
    /// the `ActivityAttributes` type's name, its attributes and its first content state, exactly as a remote start
    /// would carry them (`aps.attributes-type`, `aps.attributes`, `aps.content-state`), brand included.
    public static func localStart(_ content: LiveActivityContent) -> (
        attributesType: String, attributes: JSONValue,
        contentState: JSONValue
    ) {
        (
            content.template.attributesType,
            attributesPayload(content, activityID: content.activityID.uuidString.lowercased()),
            content.state.contentState(displayName: content.displayName, miniAppID: content.miniAppID)
        )
    }

    static func attributesPayload(_ content: LiveActivityContent, activityID: String) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("title", .string(content.attributes.title))]
        if let subtitle = content.attributes.subtitle { members.append(("subtitle", .string(subtitle))) }
        members.append(("miniAppId", .string(content.miniAppID)))
        members.append(("displayName", .string(content.displayName)))
        members.append(("activityId", .string(activityID)))
        return .object(members)
    }

    static func unixSeconds(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }
}
