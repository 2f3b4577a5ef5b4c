import Foundation

/// A reminder the host schedules for one of its users on behalf of a mini-app's bundle
/// (`based.notifications.schedule(..., when)`), after validation: every rule that needs
/// no database checked. It is delivered as a push from that mini-app, so the push's rules apply
/// to its text and deep link.
public struct ReminderRequest: Sendable, Equatable {
    public var miniAppID: String
    public var title: String
    public var body: String
    public var deepLink: String?
    /// The time asked for. Up to `PushRules.pastSendAtTolerance` in the past is kept as asked and
    /// is due at once.
    public var at: Date

    /// The push it is delivered as: no identifiers (its one recipient is known by id), no partner
    /// data, due at `at`, the default TTL counted from then.
    public var push: PushRequest {
        PushRequest(
            emails: [], wallets: [], title: title, body: body, deepLink: deepLink, data: [], sendAt: at,
            ttlSeconds: nil)
    }
}

/// Where a reminder stands. Only `scheduled` reminders can be cancelled; `sent` means a worker
/// took at least one of its deliveries (its audit row's counts say how each device fared).
public enum ReminderStatus: String, Sendable, Decodable {
    case scheduled, sent, cancelled
}

public enum ReminderValidator {
    /// The fields of `POST /api/internal/users/{userId}/reminders`.
    public static let fields: Set<String> = ["miniAppId", "title", "body", "deepLink", "at"]

    /// Validates a reminder body. Throws the first rule broken: 400 for a malformed field, 403
    /// `deep_link_forbidden` for a link outside the mini-app's namespace, 422 `at_out_of_range`.
    public static func validate(_ json: JSONValue, rules: PushRules, now: Date) throws(HeraldError) -> ReminderRequest {
        let fields = try JSONFields(json, allowed: fields)
        let miniAppID = try fields.requiredString("miniAppId")
        guard Identifiers.isValidMiniAppID(miniAppID) else {
            throw .invalidField("miniAppId", "miniAppId must be 1-128 of letters, digits, '.', '_' and '-'.")
        }
        let title = try PushRequestValidator.title(json["title"], rules: rules)
        let body = try PushRequestValidator.body(json["body"], rules: rules)
        let deepLink = try PushRequestValidator.deepLink(json["deepLink"], rules: rules, miniAppID: miniAppID)
        guard let atText = try fields.string("at") else { throw .missingField("at") }
        guard let at = ISO8601.parse(atText) else {
            throw .invalidField("at", "at must be an RFC 3339 timestamp with a time zone.")
        }
        if let problem = rules.scheduleProblem(at, now: now) {
            throw .ruleViolated("at_out_of_range", "at \(problem).", field: "at")
        }
        return ReminderRequest(miniAppID: miniAppID, title: title, body: body, deepLink: deepLink, at: at)
    }
}
