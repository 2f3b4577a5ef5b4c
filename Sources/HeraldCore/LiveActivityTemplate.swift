import Foundation

/// The Live Activity templates a partner can start. Each is a Swift struct the host's
/// Widget Extension declares (docs/live-activities.md); the raw value is what partners send.
public enum LiveActivityTemplate: String, CaseIterable, Sendable {
    case progress, status, countdown

    /// The Swift struct name the host's Widget Extension declares (`aps.attributes-type`).
    public var attributesType: String {
        switch self {
        case .progress: return "MiniAppProgressAttributes"
        case .status: return "MiniAppStatusAttributes"
        case .countdown: return "MiniAppCountdownAttributes"
        }
    }

    /// Every key of the template's state, in the order Herald stores and sends them.
    public var stateKeys: [String] {
        switch self {
        case .progress: return ["stages", "currentStage", "progress", "statusText"]
        case .status: return ["statusLabel", "statusVariant", "footnote"]
        case .countdown: return ["deadline", "footnote"]
        }
    }

    /// The keys a patch may clear with `null`.
    public var optionalStateKeys: Set<String> {
        switch self {
        case .progress: return ["statusText"]
        case .status, .countdown: return ["footnote"]
        }
    }
}

/// What one Live Activity push does (`aps.event`, the Android `event`).
public enum LiveActivityEvent: String, CaseIterable, Sendable {
    case start, update, end
}

/// An alert shown with a start, update or end; the title is brand-prefixed when rendered. Its `localized` variants
/// are matched against the activity's user's locale as a push's are (`text(for:)`).
public struct LiveActivityAlert: Sendable, Equatable {
    public var title: String
    public var body: String = ""
    /// The title and body in other languages, in the partner's order.
    public var localized: [LocalizedText] = []

    /// The stored form: `{"title","body","localized"?}` (a start's alert is rendered again on each restart).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("title", .string(title)), ("body", .string(body))]
        if !localized.isEmpty {
            members.append(
                (
                    "localized",
                    .object(
                        localized.map { ($0.tag, .object([("title", .string($0.title)), ("body", .string($0.body))])) })
                ))
        }
        return .object(members)
    }

    /// The alert a user with `locale` is shown: the variant it matches (`LocaleTag.lookup`), else the default text.
    public func text(for locale: String?) -> LiveActivityAlert {
        guard !localized.isEmpty, let tag = LocaleTag.lookup(locale, in: localized.map(\.tag)),
            let variant = localized.first(where: { $0.tag == tag })
        else { return LiveActivityAlert(title: title, body: body) }
        return LiveActivityAlert(title: variant.title, body: variant.body)
    }

    /// Reads and validates an `alert` object (the partner's, or the stored form).
    public static func decode(_ json: JSONValue, rules: LiveActivityRules = LiveActivityRules(), path: String = "alert")
        throws(HeraldError) -> LiveActivityAlert
    {
        let fields = try JSONFields(json, allowed: ["title", "body", "localized"], path: path)
        let text = { (fields: JSONFields) throws(HeraldError) -> (title: String, body: String) in
            let title = try rules.text(
                fields.requiredString("title"), field: fields.field("title"), length: rules.alertTitleLength)
            let body = try rules.text(
                fields.string("body") ?? "", field: fields.field("body"), length: 0...rules.maxAlertBodyCharacters,
                allowing: TextRules.bodyWhitespace, blankAllowed: true)
            return (title, body)
        }
        let (title, body) = try text(fields)
        let localized = try LocalizedText.parse(
            fields.value("localized"), field: fields.field("localized"), maxVariants: LocalizedText.maxVariants
        ) { (variant, _) throws(HeraldError) in try text(variant) }
        return LiveActivityAlert(title: title, body: body, localized: localized)
    }
}

/// The static attributes, fixed at start (every template has the same two).
public struct LiveActivityAttributes: Sendable, Equatable {
    public var title: String
    public var subtitle: String?

    /// The stored form (what GET returns): `{"title","subtitle"?}`.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("title", .string(title))]
        if let subtitle { members.append(("subtitle", .string(subtitle))) }
        return .object(members)
    }

    /// Reads and validates an `attributes` object (the partner's, or the stored form).
    public static func decode(
        _ json: JSONValue, rules: LiveActivityRules = LiveActivityRules(), path: String = "attributes"
    ) throws(HeraldError) -> LiveActivityAttributes {
        let fields = try JSONFields(json, allowed: ["title", "subtitle"], path: path)
        let title = try rules.text(
            fields.requiredString("title"), field: fields.field("title"), length: rules.titleLength)
        var subtitle: String?
        if let text = try fields.string("subtitle") {
            subtitle = try rules.text(
                text, field: fields.field("subtitle"), length: 0...rules.maxSubtitleCharacters, blankAllowed: true)
        }
        return LiveActivityAttributes(title: title, subtitle: subtitle)
    }
}

/// Whom a start is for: exactly one identifier, normalised as pushes normalise them (`Identifiers`).
public enum LiveActivityRecipient: Sendable, Equatable {
    case email(String)
    case wallet(String)
}
