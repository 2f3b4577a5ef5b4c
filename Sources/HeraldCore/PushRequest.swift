import Foundation

/// A partner's push after validation: identifiers normalised and de-duplicated, every rule of
/// docs/api.md that needs no database checked.
public struct PushRequest: Sendable, Equatable {
    public var emails: [String]
    public var wallets: [String]
    public var title: String
    public var body: String
    public var deepLink: String?
    /// Partner data in the partner's key order.
    public var data: [DataEntry]
    public var sendAt: Date?
    public var ttlSeconds: Int?
    /// `aps.interruption-level`; whether the partner may use it is checked against its row
    /// (`InterruptionLevel.authorize`).
    public var interruptionLevel: InterruptionLevel = .default
    /// Pushes with one key replace each other on the device (`collapseKey` in the payload, the collapse id the
    /// outbox writer derives from it), and a newer one supersedes an older one still queued.
    public var collapseKey: String?
    /// `aps.category` / FCM data `category`: one of the host build's categories (`PushRules.notificationCategories`).
    public var category: String?
    /// A media file the partner uploaded (`POST /api/partners/media`): the payloads carry its signed URL as
    /// `attachmentUrl` (PushMedia).
    public var mediaID: UUID?
    /// The title and body in other languages, in the partner's order; each user gets the variant its locale matches
    /// (`LocaleTag.lookup`), else `title` and `body`.
    public var localized: [LocalizedText] = []

    public struct DataEntry: Sendable, Equatable {
        public var key: String
        public var value: String
        public init(key: String, value: String) { self.key = key; self.value = value }
    }

    public var identifierCount: Int { emails.count + wallets.count }

    /// The variant a user with `locale` gets (`LocaleTag.lookup` over the variants' tags); nil: the default text.
    public func variant(for locale: String?) -> LocalizedText? {
        guard !localized.isEmpty, let tag = LocaleTag.lookup(locale, in: localized.map(\.tag)) else { return nil }
        return localized.first { $0.tag == tag }
    }
}

/// Limits of the push endpoint; the defaults are docs/api.md's.
public struct PushRules: Sendable {
    public var maxRecipients = 1_000
    public var maxTitleCharacters = 120
    public var maxBodyCharacters = 1_000
    public var deepLinkScheme = "basedapp"
    public var maxScheduleAhead: TimeInterval = 7 * 24 * 3600
    /// A `sendAt` slightly in the past (clock skew) means "now"; further back is refused.
    public var pastSendAtTolerance: TimeInterval = 300
    /// APNs keeps a notification at most 30 days, FCM 28: the shorter bounds the TTL.
    public var maxTTLSeconds = PushRules.ttlRange.upperBound
    /// The TTL of a push sent without `ttlSeconds` (HERALD_DEFAULT_TTL_SECONDS). Never 0: an APNs
    /// expiration of 0 means "try once, keep nothing" for a phone that is offline.
    public var defaultTTLSeconds = PushRules.ttlRange.upperBound
    public var maxDataKeyCharacters = 128
    /// The intake's public base URL (HERALD_PUBLIC_URL), which payloads' `imageUrl` starts with; without
    /// it payloads carry no icon.
    public var publicURL: String?
    /// The categories a push may name (HERALD_NOTIFICATION_CATEGORIES); none unless the host lists its build's.
    public var notificationCategories = NotificationCategories.none
    /// The most languages a push's `localized` carries.
    public var maxLocalizedVariants = LocalizedText.maxVariants

    public init() {}

    /// What `ttlSeconds` and HERALD_DEFAULT_TTL_SECONDS may be: 1 second to 28 days.
    public static let ttlRange = 1...(28 * 24 * 3600)

    /// The TTL a validated push gets: the partner's, else the default. It counts from when the
    /// push is due (its `sendAt`, else its acceptance): a scheduled reminder is worth as much
    /// time after it is due as one sent at once.
    public func ttlSeconds(for push: PushRequest) -> Int { push.ttlSeconds ?? defaultTTLSeconds }

    /// When a push accepted at `acceptedAt` expires: its TTL counted from when it is due (the payloads' `exp`).
    public func expiresAt(for push: PushRequest, acceptedAt: Date) -> Date {
        (push.sendAt ?? acceptedAt).addingTimeInterval(Double(ttlSeconds(for: push)))
    }

    /// Why `date` cannot be a scheduled time (a push's `sendAt`, a reminder's `at`), as the end of a
    /// sentence; nil when it can: at most `maxScheduleAhead` ahead, at most `pastSendAtTolerance` past.
    public func scheduleProblem(_ date: Date, now: Date) -> String? {
        if date.timeIntervalSince(now) > maxScheduleAhead {
            return "may be at most \(Int(maxScheduleAhead / 86400)) days ahead"
        }
        if now.timeIntervalSince(date) > pastSendAtTolerance { return "is in the past" }
        return nil
    }

    /// Keys Herald itself puts in the payload, or that FCM forbids; `icon` because the host renders
    /// the mini-app's icon from the partner row, never from a push; `collapseKey` and `category` because the payloads
    /// carry the push's own (NotificationCategories); `event` because Herald's retract message names itself by it
    /// (RetractMessage); `mediaId` and `attachmentUrl` because a push's media is named by the first and carried as the
    /// second (PushMedia).
    public static let reservedDataKeys: Set<String> = [
        "channel", "miniAppId", "deepLink", "deliveryId", "sig", "kid", "from", "message_type",
        "aps", "title", "body", "senderName", "imageUrl", "isGroup", "notification", "icon", "exp", "sig2",
        "collapseKey", "category", "event", "mediaId", "attachmentUrl",
    ]

    /// `reservedDataKeys` lower-cased: a key is compared in any letter case.
    private static let reservedLowercased = Set(reservedDataKeys.map { String(asciiLowercased($0.unicodeScalars)) })

    /// Reserved in any letter case (`Channel`, `SIG`, `Google.x`, `FROM`): an app or an FCM library that reads
    /// keys case-insensitively would otherwise take the partner's value for Herald's. Only A-Z are folded, as
    /// the schema's `[cC]` classes do (docs/openapi.yaml): Unicode's lower-casing would also fold the Kelvin
    /// sign into `k`, which no reader of the key confuses with Herald's `kid`.
    public static func isReservedDataKey(_ key: String) -> Bool {
        // Prefixes by scalars: "google" + a combining mark is still a google key to FCM.
        let lowered = asciiLowercased(key.unicodeScalars)
        return reservedLowercased.contains(String(lowered)) || lowered.starts(with: "google".unicodeScalars)
            || lowered.starts(with: "gcm".unicodeScalars)
    }

    private static func asciiLowercased(_ scalars: String.UnicodeScalarView) -> String.UnicodeScalarView {
        var result = String.UnicodeScalarView()
        for scalar in scalars {
            result.append(("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32)! : scalar)
        }
        return result
    }
}

public enum PushRequestValidator {
    static let knownFields: Set<String> = [
        "recipients", "title", "body", "deepLink", "data", "sendAt", "ttlSeconds", "interruptionLevel",
        "collapseKey", "category", "mediaId", "localized",
    ]

    /// Validates the JSON body of `POST /api/partners/notifications/push` for the partner whose
    /// mini-app is `miniAppID`. Throws the first rule broken.
    public static func validate(_ json: JSONValue, miniAppID: String, rules: PushRules, now: Date)
        throws(HeraldError) -> PushRequest
    {
        guard let members = json.objectMembers else {
            throw .invalidField("", "The body must be a JSON object.")
        }
        for member in members where !knownFields.contains(member.key) {
            throw .unknownField(member.key)
        }
        let (emails, wallets) = try recipients(json["recipients"], rules: rules)

        let title = try title(json["title"], rules: rules)
        let body = try body(json["body"], rules: rules)
        let deepLink = try deepLink(json["deepLink"], rules: rules, miniAppID: miniAppID)

        let data = try dataEntries(json["data"], rules: rules)
        let sendAt = try sendAt(json["sendAt"], rules: rules, now: now)

        var ttlSeconds: Int?
        if let ttlValue = json["ttlSeconds"], ttlValue != .null {
            guard let number = ttlValue.numberValue, number == number.rounded(), number >= 1,
                number <= Double(rules.maxTTLSeconds)
            else {
                throw .invalidField("ttlSeconds", "ttlSeconds must be a whole number from 1 to \(rules.maxTTLSeconds).")
            }
            ttlSeconds = Int(number)
        }

        return PushRequest(
            emails: emails, wallets: wallets, title: title, body: body, deepLink: deepLink,
            data: data, sendAt: sendAt, ttlSeconds: ttlSeconds,
            interruptionLevel: try interruptionLevel(json["interruptionLevel"]),
            collapseKey: try collapseKey(json["collapseKey"]),
            category: try rules.notificationCategories.validate(json["category"]),
            mediaID: try mediaID(json["mediaId"]),
            localized: try LocalizedText.parse(json["localized"], maxVariants: rules.maxLocalizedVariants) {
                (fields, path) throws(HeraldError) in
                (
                    try Self.title(fields.value("title"), rules: rules, field: fields.field("title")),
                    try Self.body(fields.value("body"), rules: rules, field: fields.field("body"))
                )
            })
    }

    /// `mediaId`: optional, a UUID in its 36-character form (whose media it is, the intake checks).
    private static func mediaID(_ value: JSONValue?) throws(HeraldError) -> UUID? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue, text.utf8.count == 36, let id = UUIDText.parse(text) else {
            throw .invalidField("mediaId", "mediaId must be the id POST /api/partners/media answered.")
        }
        return id
    }

    /// The most characters of a collapse key.
    static let maxCollapseKeyCharacters = 64

    /// `collapseKey`: optional, 1-64 printable ASCII characters (space to tilde), as an Idempotency-Key's.
    private static func collapseKey(_ value: JSONValue?) throws(HeraldError) -> String? {
        guard let value, value != .null else { return nil }
        guard let key = value.stringValue, Identifiers.isPrintableASCII(key, maxLength: maxCollapseKeyCharacters)
        else {
            throw .invalidField(
                "collapseKey", "collapseKey must be 1-\(maxCollapseKeyCharacters) printable ASCII characters.")
        }
        return key
    }

    /// `passive`, `active` or `time-sensitive`; absent or null is `active`. Apple's fourth value,
    /// `critical`, is refused like any other (InterruptionLevel says why).
    private static func interruptionLevel(_ value: JSONValue?) throws(HeraldError) -> InterruptionLevel {
        guard let value, value != .null else { return .default }
        guard let text = value.stringValue, let level = InterruptionLevel(rawValue: text) else {
            throw .invalidField("interruptionLevel", "interruptionLevel must be passive, active or time-sensitive.")
        }
        return level
    }

    /// `title`: 1-`maxTitleCharacters`, before the brand prefix (shared with `ReminderValidator`).
    static func title(_ value: JSONValue?, rules: PushRules, field: String = "title") throws(HeraldError) -> String {
        guard let value else { throw .missingField(field) }
        guard let title = value.stringValue else { throw .invalidField(field, "\(field) must be a string.") }
        // Lengths count Unicode scalars, as JSON Schema's maxLength does (docs/openapi.yaml), so
        // a title the schema allows is never refused for its length.
        let titleLength = title.unicodeScalars.count
        guard titleLength >= 1, titleLength <= rules.maxTitleCharacters else {
            throw .invalidField(field, "\(field) must be 1-\(rules.maxTitleCharacters) characters.")
        }
        guard !TextRules.containsForbidden(title) else {
            throw .invalidField(
                field,
                "\(field) must not contain control, separator, bidirectional formatting or invisible characters.")
        }
        guard !title.unicodeScalars.allSatisfy(\.properties.isWhitespace) else {
            throw .invalidField(field, "\(field) must not be blank.")
        }
        // The user sees `[displayName] title`: a title opening with a bracket would show a second, forged prefix.
        if let first = title.unicodeScalars.first(where: { !$0.properties.isWhitespace }),
            first == "[" || first == "［"
        {
            throw titleBracketPrefix(field)
        }
        return title
    }

    static func titleBracketPrefix(_ field: String) -> HeraldError {
        HeraldError(
            status: 400, code: "title_bracket_prefix",
            message: "\(field) must not start with [: the brand prefix [displayName] is Herald's.", field: field)
    }

    /// `body`: optional (`""`), at most `maxBodyCharacters`, newlines and tabs allowed.
    static func body(_ value: JSONValue?, rules: PushRules, field: String = "body") throws(HeraldError) -> String {
        guard let value, value != .null else { return "" }
        guard let text = value.stringValue else { throw .invalidField(field, "\(field) must be a string.") }
        guard text.unicodeScalars.count <= rules.maxBodyCharacters else {
            throw .invalidField(field, "\(field) must be at most \(rules.maxBodyCharacters) characters.")
        }
        guard !TextRules.containsForbidden(text, allowing: TextRules.bodyWhitespace) else {
            throw .invalidField(
                field,
                "\(field) must not contain control, bidirectional formatting or invisible characters other than "
                    + "newlines and tabs.")
        }
        return text
    }

    /// `deepLink`: optional, inside the mini-app's namespace (`DeepLink.validate`).
    static func deepLink(_ value: JSONValue?, rules: PushRules, miniAppID: String) throws(HeraldError) -> String? {
        guard let value, value != .null else { return nil }
        guard let link = value.stringValue else { throw .invalidField("deepLink", "deepLink must be a string.") }
        try DeepLink.validate(link, scheme: rules.deepLinkScheme, miniAppID: miniAppID)
        return link
    }

    private static func recipients(_ value: JSONValue?, rules: PushRules) throws(HeraldError) -> ([String], [String]) {
        guard let value else { throw .missingField("recipients") }
        guard let members = value.objectMembers else {
            throw .invalidField("recipients", "recipients must be an object with emails and/or wallets.")
        }
        for member in members where member.key != "emails" && member.key != "wallets" {
            throw .unknownField("recipients.\(member.key)")
        }
        let emails = try identifierList(
            value["emails"], field: "recipients.emails", normalize: Identifiers.normalizedEmail)
        let wallets = try identifierList(
            value["wallets"], field: "recipients.wallets", normalize: Identifiers.normalizedWallet)
        let total = emails.count + wallets.count
        guard total > 0 else {
            throw .invalidField("recipients", "recipients must name at least one email or wallet.")
        }
        guard total <= rules.maxRecipients else {
            throw .ruleViolated(
                "too_many_recipients", "At most \(rules.maxRecipients) recipients per request; got \(total).",
                field: "recipients")
        }
        return (emails, wallets)
    }

    private static func identifierList(
        _ value: JSONValue?, field: String, normalize: (String) -> String?
    ) throws(HeraldError) -> [String] {
        guard let value, value != .null else { return [] }
        guard let items = value.arrayValue else { throw .invalidField(field, "\(field) must be an array of strings.") }
        var seen = Set<String>()
        var result: [String] = []
        for (position, item) in items.enumerated() {
            guard let text = item.stringValue, let normalized = normalize(text) else {
                throw .invalidField("\(field)[\(position)]", "\(field)[\(position)] is not a valid identifier.")
            }
            if seen.insert(normalized).inserted { result.append(normalized) }
        }
        return result
    }

    private static func dataEntries(_ value: JSONValue?, rules: PushRules) throws(HeraldError) -> [PushRequest
        .DataEntry]
    {
        guard let value, value != .null else { return [] }
        guard let members = value.objectMembers else {
            throw .invalidField("data", "data must be an object of string values.")
        }
        var entries: [PushRequest.DataEntry] = []
        for member in members {
            // A key with control characters is named by its container: echoing it in `field`
            // would hand the bad bytes back to the partner's logs.
            guard !TextRules.containsForbidden(member.key) else {
                throw .invalidField(
                    "data", "data keys must not contain control, separator or bidirectional formatting characters.")
            }
            let field = "data.\(member.key)"
            guard !member.key.isEmpty, member.key.unicodeScalars.count <= rules.maxDataKeyCharacters else {
                throw .invalidField(field, "data keys must be 1-\(rules.maxDataKeyCharacters) characters.")
            }
            guard !PushRules.isReservedDataKey(member.key) else {
                throw .invalidField(field, "\(member.key) is reserved and cannot be used in data.")
            }
            guard let text = member.value.stringValue else {
                throw .invalidField(field, "data values must be strings; \(member.key) is a \(member.value.typeName).")
            }
            // No exception for newlines here: data is machine-read, and only the body is shown
            // as prose. NUL would also be refused by Postgres (jsonb has no \u0000).
            guard !TextRules.containsForbidden(text) else {
                throw .invalidField(
                    field, "data values must not contain control, separator or bidirectional formatting characters.")
            }
            entries.append(.init(key: member.key, value: text))
        }
        return entries
    }

    private static func sendAt(_ value: JSONValue?, rules: PushRules, now: Date) throws(HeraldError) -> Date? {
        guard let value, value != .null else { return nil }
        guard let text = value.stringValue, let date = ISO8601.parse(text) else {
            throw .invalidField("sendAt", "sendAt must be an ISO-8601 timestamp with a time zone.")
        }
        if let problem = rules.scheduleProblem(date, now: now) {
            throw .ruleViolated("send_at_out_of_range", "sendAt \(problem).", field: "sendAt")
        }
        return date > now ? date : nil
    }
}
