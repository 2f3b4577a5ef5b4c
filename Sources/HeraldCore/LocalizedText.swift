import Foundation

/// A push's (or a Live Activity alert's) title and body in one language: a `localized` member, its key a
/// `LocaleTag` in canonical case.
public struct LocalizedText: Sendable, Equatable {
    public var tag: String
    public var title: String
    public var body: String

    public init(tag: String, title: String, body: String) {
        self.tag = tag
        self.title = title
        self.body = body
    }

    /// The most languages a push's or an alert's `localized` carries.
    public static let maxVariants = 20

    /// The members of one variant.
    static let fields: Set<String> = ["title", "body"]

    /// `localized`: an object of at most `maxVariants` variants keyed by language tag, each `{"title","body"?}`
    /// checked by `text` (given the variant's field path, `localized.de.title`). Absent or null: none. Tags that are
    /// the same in canonical case (`pt-br`, `pt-BR`) are refused: 422 `duplicate_locale`.
    public static func parse(
        _ value: JSONValue?, field: String = "localized", maxVariants: Int,
        text: (JSONFields, String) throws(HeraldError) -> (title: String, body: String)
    ) throws(HeraldError) -> [LocalizedText] {
        guard let value, value != .null else { return [] }
        guard let members = value.objectMembers else {
            throw .invalidField(field, "\(field) must be an object of {title, body} keyed by BCP 47 language tag.")
        }
        guard members.count <= maxVariants else {
            throw HeraldError(
                status: 400, code: "too_many_variants",
                message: "\(field) may carry at most \(maxVariants) languages; got \(members.count).", field: field)
        }
        var variants: [LocalizedText] = []
        for member in members {
            // A key that is no tag is named only when it is short printable ASCII, as a data key with control
            // characters is not echoed back (PushRequestValidator.dataEntries).
            let named = Identifiers.isPrintableASCII(member.key, maxLength: LocaleTag.maxLength)
            let path = named ? "\(field).\(member.key)" : field
            guard let tag = LocaleTag(member.key) else { throw LocaleTag.invalid(field: path) }
            // Two keys that differ only in letter case are each well-formed: a rule across members, so a 422.
            guard !variants.contains(where: { $0.tag == tag.text }) else {
                throw .ruleViolated("duplicate_locale", "\(field) names \(tag.text) twice.", field: path)
            }
            let (title, body) = try text(JSONFields(member.value, allowed: fields, path: path), path)
            variants.append(LocalizedText(tag: tag.text, title: title, body: body))
        }
        return variants
    }
}
