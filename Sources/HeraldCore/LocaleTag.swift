import Foundation

/// A BCP 47 language tag (RFC 5646) in its canonical case: a user's `locale` and the keys of a push's `localized`
/// variants. Well-formed is checked, subtag by subtag (language with optional extended subtags, script, region,
/// variants, extensions, private use: the grammar of RFC 5646 section 2.1, which docs/openapi.yaml's `LocaleTag`
/// pattern states too); validity (registered subtags, no repeated variant) is not: a tag the host's app knows is
/// enough.
/// Case is normalised as RFC 5646 section 2.1.1 recommends: the language and everything after it lower case, a
/// script title case (`Hant`), a region upper case (`BR`), except inside extensions and private use, lower case.
public struct LocaleTag: Sendable, Hashable, CustomStringConvertible {
    /// The canonical text (`zh-Hant-TW`).
    public let text: String

    /// The most characters of a tag (a user's `locale`, a variant's key).
    public static let maxLength = 35

    /// `text` if it is a well-formed tag of at most `maxLength` characters, in canonical case; nil otherwise.
    public init?(_ text: String) {
        guard (2...Self.maxLength).contains(text.utf8.count),
            text.utf8.allSatisfy({ Self.isAlphanumeric($0) || $0 == UInt8(ascii: "-") })
        else { return nil }
        let subtags = text.lowercased().split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard let canonical = Self.canonical(subtags) else { return nil }
        self.text = canonical.joined(separator: "-")
    }

    public var description: String { text }

    /// The tags RFC 4647's lookup tries for this one, most specific first: the tag, then the tag with its last
    /// subtag removed, and so on down to the language (a singleton left last is removed with it): `zh-Hant-TW`,
    /// `zh-Hant`, `zh`.
    public var lookupChain: [String] {
        var subtags = text.split(separator: "-").map(String.init)
        var chain: [String] = []
        while !subtags.isEmpty {
            chain.append(subtags.joined(separator: "-"))
            subtags.removeLast()
            if let last = subtags.last, last.count == 1 { subtags.removeLast() }
        }
        return chain
    }

    /// RFC 4647 lookup: of `available` (canonical tags), the one the user's `locale` matches first along its
    /// `lookupChain` (case-insensitively, as both are canonical), else nil (the default text). So a `pt-BR` user
    /// gets `pt` when there is no `pt-BR`, but a `pt` user does not get `pt-BR`: a more specific variant is written
    /// for its region, and the default is the partner's choice for everyone else.
    public static func lookup(_ locale: String?, in available: [String]) -> String? {
        guard let locale, !available.isEmpty, let tag = LocaleTag(locale) else { return nil }
        return tag.lookupChain.first { available.contains($0) }
    }

    // MARK: Syntax

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte)
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func alpha(_ subtag: String, _ lengths: ClosedRange<Int>) -> Bool {
        lengths.contains(subtag.utf8.count) && subtag.utf8.allSatisfy(isAlpha)
    }

    private static func alphanumeric(_ subtag: String, _ lengths: ClosedRange<Int>) -> Bool {
        lengths.contains(subtag.utf8.count) && subtag.utf8.allSatisfy(isAlphanumeric)
    }

    /// `langtag` or `privateuse` of RFC 5646 section 2.1 over lower-cased subtags, in canonical case; nil when the
    /// subtags do not follow the grammar.
    private static func canonical(_ subtags: [String]) -> [String]? {
        var index = 0
        var result: [String] = []
        func next() -> String? { index < subtags.count ? subtags[index] : nil }
        // A tag of private use only (`x-whatever`).
        if next() == "x" { return privateUse(subtags, from: 0) }
        // language: 2-3 letters with up to three 3-letter extended subtags, or 4-8 letters.
        guard let language = next(), alpha(language, 2...8) else { return nil }
        result.append(language)
        index += 1
        if language.utf8.count <= 3 {
            var extended = 0
            while extended < 3, let subtag = next(), alpha(subtag, 3...3) {
                result.append(subtag)
                index += 1
                extended += 1
            }
        }
        if let script = next(), alpha(script, 4...4) {
            result.append(script.prefix(1).uppercased() + script.dropFirst())
            index += 1
        }
        if let region = next(), alpha(region, 2...2) || (region.utf8.count == 3 && region.utf8.allSatisfy(isDigit)) {
            result.append(region.uppercased())
            index += 1
        }
        while let variant = next(),
            alphanumeric(variant, 5...8)
                || (variant.utf8.count == 4 && isDigit(variant.utf8.first!)
                    && alphanumeric(variant, 4...4))
        {
            result.append(variant)
            index += 1
        }
        while let singleton = next(), singleton.utf8.count == 1, singleton != "x" {
            guard alphanumeric(singleton, 1...1) else { return nil }
            result.append(singleton)
            index += 1
            var parts = 0
            while let part = next(), alphanumeric(part, 2...8) {
                result.append(part)
                index += 1
                parts += 1
            }
            guard parts > 0 else { return nil }
        }
        if next() == "x" {
            guard let rest = privateUse(subtags, from: index) else { return nil }
            return result + rest
        }
        return index == subtags.count ? result : nil
    }

    /// `x` and one or more subtags of 1-8 letters or digits, to the end.
    private static func privateUse(_ subtags: [String], from start: Int) -> [String]? {
        let rest = subtags[(start + 1)...]
        guard !rest.isEmpty, rest.allSatisfy({ alphanumeric($0, 1...8) }) else { return nil }
        return Array(subtags[start...])
    }
}

/// What a user PUT does to the user's stored locale: `keep` it (the body has no `locale`), or `set` it to a tag or
/// clear it (`"locale": null`).
public enum LocaleUpdate: Sendable, Equatable {
    case keep
    case set(LocaleTag?)

    /// The user body's field.
    public static let field = "locale"

    /// `locale` of a user body: absent keeps, null clears, a well-formed tag (canonical case) sets.
    public static func parse(_ fields: JSONFields) throws(HeraldError) -> LocaleUpdate {
        guard fields.has(field) else { return .keep }
        guard let text = try fields.string(field) else { return .set(nil) }
        guard let tag = LocaleTag(text) else { throw LocaleTag.invalid(field: fields.field(field)) }
        return .set(tag)
    }
}

extension LocaleTag {
    /// The 400 for a language tag that is not well-formed BCP 47 or is longer than `maxLength`.
    public static func invalid(field: String) -> HeraldError {
        HeraldError(
            status: 400, code: "invalid_locale",
            message: "\(field) must be a BCP 47 language tag of at most \(maxLength) characters, such as de, pt-BR "
                + "or zh-Hant-TW.", field: field)
    }
}
