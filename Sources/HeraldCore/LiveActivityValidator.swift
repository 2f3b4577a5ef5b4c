import Foundation

/// A partner's start (`POST /api/partners/live-activities`) after validation.
public struct LiveActivityStart: Sendable, Equatable {
    public var recipient: LiveActivityRecipient
    public var template: LiveActivityTemplate
    public var attributes: LiveActivityAttributes
    public var state: LiveActivityState
    /// The partner's, else `LiveActivityRules.defaultTTLSeconds`.
    public var ttlSeconds: Int
    public var alert: LiveActivityAlert?
    /// The partner's, else `LiveActivityRules.defaultRelevanceScore`.
    public var relevanceScore: Int = 50
    /// `startAt` as given: when to send the start (`LiveActivityRules.scheduledStart` decides whether it waits).
    public var startAt: Date? = nil
}

/// A partner's broadcast channel (`POST /api/partners/live-activities/channels`) after validation.
public struct LiveChannelOpen: Sendable, Equatable {
    public var template: LiveActivityTemplate
    public var attributes: LiveActivityAttributes
    public var state: LiveActivityState
    /// The partner's, else `LiveActivityRules.defaultTTLSeconds`.
    public var ttlSeconds: Int
    /// The partner's, else `LiveActivityRules.defaultRelevanceScore`.
    public var relevanceScore: Int
}

/// An update (`POST .../{id}/update`, `PATCH .../{id}`) or an end (`DELETE .../{id}`) after
/// validation. The state patch is only shape-checked here: the template is the stored
/// activity's, so `LiveActivityState.merged(with:)` validates it.
public struct LiveActivityChange: Sendable, Equatable {
    /// The raw partial state object.
    public var statePatch: JSONValue?
    public var alert: LiveActivityAlert?
    /// Update only.
    public var ttlSeconds: Int?
    /// End only.
    public var dismissAt: Date?
    /// Update only: the activity's new score (nil keeps the current one).
    public var relevanceScore: Int?
}

/// Validates the Live Activity bodies of docs/api-live-activities.md (every rule that needs no database). Throws the
/// first rule broken: 400 for shape and type (`missing_field`, `invalid_field`, `unknown_field`),
/// 422 for template rules (`invalid_state`, `unknown_template`); docs/live-activities.md lists them.
public enum LiveActivityValidator {
    static let startFields: Set<String> = [
        "recipient", "template", "attributes", "state", "ttlSeconds", "alert", "relevanceScore", "startAt",
    ]
    static let updateFields: Set<String> = ["state", "alert", "ttlSeconds", "relevanceScore"]
    static let endFields: Set<String> = ["state", "alert", "dismissAt"]
    static let channelStartFields: Set<String> = ["recipient", "alert", "relevanceScore"]
    static let channelOpenFields: Set<String> = ["template", "attributes", "state", "ttlSeconds", "relevanceScore"]

    public static func validateStart(_ json: JSONValue, rules: LiveActivityRules) throws(HeraldError)
        -> LiveActivityStart
    {
        let fields = try JSONFields(json, allowed: startFields)
        let recipient = try recipient(fields)

        let (template, attributes, state, ttlSeconds, relevanceScore) = try content(fields, rules: rules)
        let alert = try alert(fields, rules: rules)
        return LiveActivityStart(
            recipient: recipient, template: template, attributes: attributes, state: state, ttlSeconds: ttlSeconds,
            alert: alert, relevanceScore: relevanceScore, startAt: try fields.date("startAt"))
    }

    /// A broadcast channel's opening (`POST /api/partners/live-activities/channels`): a start's content without a
    /// recipient or an alert (opening a channel shows nothing: phones start its activity themselves).
    public static func validateChannelOpen(_ json: JSONValue, rules: LiveActivityRules) throws(HeraldError)
        -> LiveChannelOpen
    {
        let fields = try JSONFields(json, allowed: channelOpenFields)
        let (template, attributes, state, ttlSeconds, relevanceScore) = try content(fields, rules: rules)
        return LiveChannelOpen(
            template: template, attributes: attributes, state: state, ttlSeconds: ttlSeconds,
            relevanceScore: relevanceScore)
    }

    /// A start from a broadcast channel (`POST .../channels/{channelId}/starts`): whom to start the channel's
    /// activity for, and optionally its alert and score; the template, attributes and state are the channel's
    /// (given here), and so is the expiry (the handler's).
    public static func validateChannelStart(
        _ json: JSONValue, channel template: LiveActivityTemplate,
        attributes: LiveActivityAttributes, state: LiveActivityState,
        rules: LiveActivityRules
    ) throws(HeraldError) -> LiveActivityStart {
        let fields = try JSONFields(json, allowed: channelStartFields)
        let recipient = try recipient(fields)
        let alert = try alert(fields, rules: rules)
        let relevanceScore =
            try fields.integer("relevanceScore", range: rules.relevanceScoreRange)
            ?? rules.defaultRelevanceScore
        return LiveActivityStart(
            recipient: recipient, template: template, attributes: attributes, state: state,
            ttlSeconds: rules.defaultTTLSeconds, alert: alert, relevanceScore: relevanceScore)
    }

    /// What a start and a channel's opening share: the template, its attributes and state, the TTL and the score.
    private static func content(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError)
        -> (LiveActivityTemplate, LiveActivityAttributes, LiveActivityState, Int, Int)
    {
        let templateName = try fields.requiredString("template")
        guard let template = LiveActivityTemplate(rawValue: templateName) else {
            throw .ruleViolated(
                "unknown_template",
                "template must be one of \(LiveActivityTemplate.allCases.map(\.rawValue).joined(separator: ", ")).",
                field: "template")
        }
        guard let attributesValue = fields.value("attributes") else { throw .missingField("attributes") }
        let attributes = try LiveActivityAttributes.decode(attributesValue, rules: rules)
        guard let stateValue = fields.value("state") else { throw .missingField("state") }
        let state = try LiveActivityState.decode(template: template, json: stateValue, rules: rules)
        let ttlSeconds = try fields.integer("ttlSeconds", range: rules.ttlRange) ?? rules.defaultTTLSeconds
        let relevanceScore =
            try fields.integer("relevanceScore", range: rules.relevanceScoreRange)
            ?? rules.defaultRelevanceScore
        return (template, attributes, state, ttlSeconds, relevanceScore)
    }

    /// An update must change something: a state patch, an alert, a TTL or the relevance score.
    public static func validateUpdate(_ json: JSONValue, rules: LiveActivityRules) throws(HeraldError)
        -> LiveActivityChange
    {
        let fields = try JSONFields(json, allowed: updateFields)
        let patch = try statePatch(fields)
        let alert = try alert(fields, rules: rules)
        let ttlSeconds = try fields.integer("ttlSeconds", range: rules.ttlRange)
        let relevanceScore = try fields.integer("relevanceScore", range: rules.relevanceScoreRange)
        guard patch != nil || alert != nil || ttlSeconds != nil || relevanceScore != nil else {
            throw HeraldError(
                status: 400, code: "missing_field",
                message: "An update needs state, alert, ttlSeconds or relevanceScore.",
                field: "state")
        }
        return LiveActivityChange(
            statePatch: patch, alert: alert, ttlSeconds: ttlSeconds, relevanceScore: relevanceScore)
    }

    /// The end body is optional (nil = no body): `{"state"?, "alert"?, "dismissAt"?}`.
    public static func validateEnd(_ json: JSONValue?, rules: LiveActivityRules) throws(HeraldError)
        -> LiveActivityChange
    {
        guard let json else { return LiveActivityChange() }
        let fields = try JSONFields(json, allowed: endFields)
        return LiveActivityChange(
            statePatch: try statePatch(fields), alert: try alert(fields, rules: rules),
            dismissAt: try fields.date("dismissAt"))
    }

    private static func recipient(_ fields: JSONFields) throws(HeraldError) -> LiveActivityRecipient {
        guard let value = fields.value("recipient") else { throw .missingField("recipient") }
        let recipient = try JSONFields(value, allowed: ["email", "wallet"], path: "recipient")
        let email = try recipient.string("email")
        let wallet = try recipient.string("wallet")
        switch (email, wallet) {
        case (let email?, nil):
            guard let normalized = Identifiers.normalizedEmail(email) else {
                throw .invalidField("recipient.email", "recipient.email is not a valid email address.")
            }
            return .email(normalized)
        case (nil, let wallet?):
            guard let normalized = Identifiers.normalizedWallet(wallet) else {
                throw .invalidField("recipient.wallet", "recipient.wallet must be 0x followed by 40 hex digits.")
            }
            return .wallet(normalized)
        default:
            throw .invalidField("recipient", "recipient must name exactly one of email or wallet.")
        }
    }

    private static func statePatch(_ fields: JSONFields) throws(HeraldError) -> JSONValue? {
        guard let patch = fields.value("state") else { return nil }
        guard patch.objectMembers != nil else { throw .invalidField("state", "state must be an object.") }
        return patch
    }

    private static func alert(_ fields: JSONFields, rules: LiveActivityRules) throws(HeraldError) -> LiveActivityAlert?
    {
        guard let value = fields.value("alert") else { return nil }
        return try LiveActivityAlert.decode(value, rules: rules)
    }
}
