import Foundation
import HeraldCore
import Testing

/// docs/openapi.yaml states the rules the server applies: for every string
/// rule with a `pattern`, a corpus of edge characters (C0, DEL, C1, separators, bidirectional
/// formatting, Unicode whitespace, combining marks, astral characters) is judged by the schema's
/// regular expression and by Herald's validator, and the two must agree both ways: a string the
/// schema allows is never refused, a string it refuses is never accepted.
@Suite struct SchemaAgreementTests {
    static let openAPI: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)) ?? ""
    }()

    /// The first `pattern: '...'` after `anchor` (a YAML single-quoted scalar), or the one `skipping` patterns later.
    static func pattern(after anchor: String, skipping: Int = 0) throws -> NSRegularExpression {
        let start = try #require(openAPI.range(of: anchor), "anchor \(anchor)")
        var key = try #require(openAPI.range(of: "pattern: '", range: start.upperBound..<openAPI.endIndex))
        for _ in 0..<skipping {
            key = try #require(openAPI.range(of: "pattern: '", range: key.upperBound..<openAPI.endIndex))
        }
        var text = ""
        var index = key.upperBound
        while index < openAPI.endIndex {
            let character = openAPI[index]
            let next = openAPI.index(after: index)
            if character == "'" {
                if next < openAPI.endIndex, openAPI[next] == "'" {
                    text.append("'"); index = openAPI.index(after: next); continue
                }
                break
            }
            text.append(character)
            index = next
        }
        return try NSRegularExpression(pattern: text)
    }

    static func matches(_ regex: NSRegularExpression, _ text: String) -> Bool {
        let range = NSRange(text.startIndex..., in: text)
        return regex.firstMatch(in: text, range: range) != nil
    }

    /// Characters at the edges of every rule.
    static let edges: [String] = {
        var scalars: [UInt32] = Array(0x00...0xA1)
        scalars += [
            0xAD, 0x0301, 0x061C, 0x1680, 0x180E, 0x2000, 0x200A, 0x200B, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029,
            0x202A, 0x202E, 0x202F, 0x205F, 0x2060, 0x2066, 0x2069, 0x3000, 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF,
        ]
        var result = scalars.compactMap(Unicode.Scalar.init).map { String(Character($0)) }
        result += ["é", "e\u{301}", "👨‍👩‍👧‍👦", "[", "]", "\\", "@", ".", "É", "［"]
        // The zero-width joiner inside and outside an emoji sequence (docs/openapi.yaml, TextRules.isEmoji).
        result += [
            "😀\u{200D}😀", "a\u{200D}😀", "😀\u{200D}a", "🏳\u{FE0F}\u{200D}🌈", "👩\u{200D}⚕\u{FE0F}",
            "\u{2190}\u{200D}\u{21FF}", "\u{218F}\u{200D}\u{2190}", "\u{1FAFF}\u{200D}\u{1F000}",
            "\u{1FB00}\u{200D}\u{1F600}", "😀\u{200D}\u{1FB00}",
        ]
        return result
    }()

    static func strings(around samples: [(String, String)]) -> [String] {
        var result: [String] = []
        for (before, after) in samples {
            for edge in edges { result.append(before + edge + after) }
        }
        return result
    }

    func agree(
        _ regex: NSRegularExpression, _ corpus: [String], maxLength: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        server: (String) -> Bool
    ) {
        for text in corpus {
            let schema = Self.matches(regex, text) && maxLength.map { text.unicodeScalars.count <= $0 } ?? true
            let accepted = server(text)
            #expect(
                schema == accepted,
                "\(text.unicodeScalars.map { String($0.value, radix: 16) }): schema \(schema), server \(accepted)",
                sourceLocation: sourceLocation)
        }
    }

    @Test func emails() throws {
        let regex = try Self.pattern(after: "\n    Email:")
        let corpus =
            Self.strings(around: [
                ("a", "@x.io"), ("a@x", ".io"), ("a@", "b.io"), ("", "@x.io"), ("a@x.io", ""),
                ("a@", ""), ("a@localhost", ""), ("a@LOCALHOST", ""),
            ])
            + ["a@LocalHost", "a@localhost", "@x.io", "a@", "a@b", "a@.", "a@@x.io", "a@b@x.io"]
        agree(regex, corpus, maxLength: 254) { Identifiers.normalizedEmail($0) != nil }
    }

    static func push(_ members: [(String, JSONValue)]) -> JSONValue {
        .object([("recipients", .object([("emails", .array([.string("a@x.io")]))]))] + members)
    }

    static func accepts(_ json: JSONValue) -> Bool {
        do {
            _ = try PushRequestValidator.validate(json, miniAppID: "fun.pull.gacha", rules: PushRules(), now: Date())
            return true
        } catch {
            return false
        }
    }

    @Test func titles() throws {
        let regex = try Self.pattern(after: "\n        title:\n          type: string")
        let corpus = Self.strings(around: [("a", "b"), ("", ""), (" ", ""), ("", " ")]) + [" ", "  ", "\u{3000}", "a"]
        agree(regex, corpus, maxLength: 120) { Self.accepts(Self.push([("title", .string($0))])) }
    }

    @Test func bodies() throws {
        let regex = try Self.pattern(after: "\n        body:\n          type: [string, 'null']")
        agree(regex, Self.strings(around: [("a", "b"), ("", "")]), maxLength: 1000) {
            Self.accepts(Self.push([("title", .string("t")), ("body", .string($0))]))
        }
    }

    @Test func dataKeysAndValues() throws {
        let keys = try Self.pattern(after: "\n          propertyNames:")
        let values = try Self.pattern(after: "\n          additionalProperties:\n            type: string")
        let corpus = Self.strings(around: [("k", "v"), ("", "")]).filter { !$0.isEmpty }
        agree(keys, corpus) { key in
            Self.accepts(Self.push([("title", .string("t")), ("data", .object([(key, .string("v"))]))]))
        }
        agree(values, corpus) { value in
            Self.accepts(Self.push([("title", .string("t")), ("data", .object([("k", .string(value))]))]))
        }
    }

    @Test func deepLinks() throws {
        let regex = try Self.pattern(after: "\n        deepLink:\n          type:")
        let root = "basedapp://miniapp/fun.pull.gacha/"
        // The schema states the characters and length; the namespace is a 403 it documents.
        agree(regex, Self.strings(around: [(root, "x"), (root, "")]), maxLength: 2048) { link in
            let error = heraldError { () throws(HeraldError) in
                try DeepLink.validate(link, scheme: "basedapp", miniAppID: "fun.pull.gacha")
            }
            return error == nil || error?.status == 403
        }
    }

    /// A push's `category`: the schema's pattern is the rule every configured identifier keeps
    /// (NotificationCategories.isValidIdentifier), and a listed one is accepted.
    @Test func categories() throws {
        let regex = try Self.pattern(after: "\n        category:\n          type: [string, 'null']")
        let corpus =
            Self.strings(around: [("INVITE", ""), ("a", "b"), ("", "")])
            + [String(repeating: "x", count: 64), String(repeating: "x", count: 65), "reply.quick-2_X"]
        agree(regex, corpus, maxLength: 64) { NotificationCategories.isValidIdentifier($0) }
        for identifier in corpus where NotificationCategories.isValidIdentifier(identifier) {
            var rules = PushRules()
            rules.notificationCategories = try NotificationCategories(parsing: identifier)
            let json = Self.push([("title", .string("t")), ("category", .string(identifier))])
            #expect(
                (try? PushRequestValidator.validate(json, miniAppID: "fun.pull.gacha", rules: rules, now: Date()))?
                    .category == identifier)
        }
    }

    @Test func displayNames() throws {
        let regex = try Self.pattern(after: "\n    DisplayName:")
        let corpus = Self.strings(around: [("a", "b"), ("", ""), ("", "b"), ("a", "")])
        agree(regex, corpus, maxLength: 64) { (try? PartnerRules.displayName($0)) != nil }
    }

    @Test func soundNames() throws {
        let regex = try Self.pattern(after: "\n    SoundName:")
        let corpus =
            Self.strings(around: [("a", "b"), ("", ""), ("", "b"), ("a", ""), ("a", ".caf")])
            + [".", "..", ".caf", "a/b", "a\\b", "default"]
        agree(regex, corpus, maxLength: 64) { (try? PartnerRules.soundName($0)) != nil }
    }

    /// The push schema's `interruptionLevel` enum is what the validator takes.
    @Test func interruptionLevels() throws {
        let start = try #require(
            Self.openAPI.range(of: "\n        interruptionLevel:\n          type: [string, 'null']"))
        let line = try #require(
            Self.openAPI[start.upperBound...].split(separator: "\n")
                .first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("enum:") })
        let values = line.drop { $0 != "[" }.dropFirst().prefix { $0 != "]" }.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(values == InterruptionLevel.allCases.map(\.rawValue) + ["null"])
        for value in values where value != "null" {
            #expect(
                Self.accepts(Self.push([("title", .string("t")), ("interruptionLevel", .string(value))])), "\(value)")
        }
        #expect(!Self.accepts(Self.push([("title", .string("t")), ("interruptionLevel", .string("critical"))])))
    }

    /// The reserved data keys the schema refuses (any letter case, the google/gcm prefixes) are the ones the
    /// validator refuses.
    @Test func reservedDataKeys() throws {
        let anchor = "\n            not:\n              anyOf:\n"
        let exact = try Self.pattern(after: anchor)
        let prefixes = try Self.pattern(after: anchor, skipping: 1)
        var corpus: [String] = []
        for key in PushRules.reservedDataKeys {
            corpus += [
                key, key.uppercased(), key.lowercased(), key.prefix(1).uppercased() + key.dropFirst(), key + "x",
                "x" + key, String(key.dropLast()),
            ]
        }
        corpus += ["google", "GOOGLE.x", "gcm", "Gcm_y", "googl", "gc", "\u{212A}id", "txHash"]
        for key in corpus {
            let schema = Self.matches(exact, key) || Self.matches(prefixes, key)
            #expect(schema == PushRules.isReservedDataKey(key), "\(key): schema \(schema)")
        }
    }

    @Test func iconURLs() throws {
        let regex = try Self.pattern(after: "\n    IconUrl:")
        let corpus =
            Self.strings(around: [
                ("https://cdn.example.com/", ".png"), ("https://", "x.io/i.png"),
                ("https://x.io", ""), ("https://x.io:", "1/a"),
            ])
            + [
                "https://x.io", "https://x.io:443/a?b#c", "https://x.io:123456/", "https://:1/", "https:///a",
                "http://x.io/",
            ]
        agree(regex, corpus, maxLength: 2048) { (try? PartnerRules.iconURL($0)) != nil }
    }

    // MARK: - Live Activities (the start, update and end bodies' text and date rules)

    static func start(
        attributes: [(String, JSONValue)] = [("title", .string("t"))],
        state: [(String, JSONValue)] = [
            ("stages", .array([.string("a")])), ("currentStage", .number(0)),
            ("progress", .number(0)),
        ],
        template: String = "progress", extra: [(String, JSONValue)] = []
    ) -> JSONValue {
        .object(
            [
                ("recipient", .object([("email", .string("a@x.io"))])), ("template", .string(template)),
                ("attributes", .object(attributes)), ("state", .object(state)),
            ] + extra)
    }

    static func startAccepted(_ json: JSONValue) -> Bool {
        (try? LiveActivityValidator.validateStart(json, rules: LiveActivityRules())) != nil
    }

    /// Text that must hold something visible, and text that may be blank.
    static let nonBlankCorpus =
        strings(around: [("a", "b"), ("", ""), (" ", ""), ("", " ")]) + [" ", "  ", "\u{3000}", "a"]
    static let plainCorpus = strings(around: [("a", "b"), ("", "")])

    @Test func liveActivityTitles() throws {
        let regex = try Self.pattern(after: "\n    LiveActivityTitle:")
        agree(regex, Self.nonBlankCorpus, maxLength: 120) {
            Self.startAccepted(Self.start(attributes: [("title", .string($0))]))
        }
        // The alert's title is the same schema.
        agree(regex, Self.nonBlankCorpus, maxLength: 120) {
            Self.startAccepted(Self.start(extra: [("alert", .object([("title", .string($0))]))]))
        }
    }

    @Test func liveActivitySubtitles() throws {
        let regex = try Self.pattern(after: "\n        subtitle:\n          type: [string, 'null']")
        agree(regex, Self.plainCorpus, maxLength: 120) {
            Self.startAccepted(Self.start(attributes: [("title", .string("t")), ("subtitle", .string($0))]))
        }
    }

    @Test func liveActivityAlertBodies() throws {
        let regex = try Self.pattern(after: "\n    LiveActivityAlert:")
        agree(regex, Self.plainCorpus, maxLength: 1000) {
            Self.startAccepted(
                Self.start(extra: [("alert", .object([("title", .string("t")), ("body", .string($0))]))]))
        }
    }

    @Test func liveActivityStateTexts() throws {
        let progress: (String, JSONValue) -> JSONValue = { key, value in
            Self.start(state: [
                ("stages", .array([.string("a")])), ("currentStage", .number(0)), ("progress", .number(0)),
                (key, value),
            ])
        }
        agree(try Self.pattern(after: "\n    LiveActivityStageName:"), Self.nonBlankCorpus, maxLength: 40) {
            Self.startAccepted(
                Self.start(state: [
                    ("stages", .array([.string($0)])), ("currentStage", .number(0)),
                    ("progress", .number(0)),
                ]))
        }
        agree(try Self.pattern(after: "\n    LiveActivityStatusText:"), Self.plainCorpus, maxLength: 200) {
            Self.startAccepted(progress("statusText", .string($0)))
        }
        agree(try Self.pattern(after: "\n    LiveActivityStatusLabel:"), Self.nonBlankCorpus, maxLength: 60) {
            Self.startAccepted(
                Self.start(
                    state: [("statusLabel", .string($0)), ("statusVariant", .string("info"))],
                    template: "status"))
        }
        agree(try Self.pattern(after: "\n    LiveActivityFootnote:"), Self.plainCorpus, maxLength: 200) {
            Self.startAccepted(
                Self.start(
                    state: [
                        ("statusLabel", .string("s")), ("statusVariant", .string("info")),
                        ("footnote", .string($0)),
                    ], template: "status"))
        }
    }

    /// Dates at every edge of `ISO8601.parse`: month lengths, leap years, fractions, zones, letter case.
    static let dateCorpus: [String] = {
        var result: [String] = []
        for year in ["2026", "2024", "2000", "1900", "2100", "0000", "0004", "9999"] {
            for (month, days) in [
                ("01", 31), ("02", 29), ("04", 30), ("06", 31), ("11", 30), ("12", 32), ("00", 1), ("13", 1),
            ] {
                for day in Set([1, 28, days - 1, days, days + 1, 0]) where day >= 0 {
                    result.append("\(year)-\(month)-\(String(format: "%02d", day))T12:00:00Z")
                }
            }
        }
        let base = "2026-12-01T09:00:00"
        for zone in [
            "Z", "z", "+00:00", "-00:00", "+23:59", "-23:59", "+24:00", "+05:60", "+5:00", "+0500", "", " Z", "Z ",
        ] {
            result.append(base + zone)
        }
        for fraction in ["", ".", ".1", ".123", ".123456789", ".1234567890", ".12a"] {
            result.append(base + fraction + "Z")
        }
        for time in ["23:59:59", "24:00:00", "23:60:00", "23:59:60", "9:00:00", "09:00"] {
            result.append("2026-12-01T\(time)Z")
        }
        result += [
            "2026-12-01t09:00:00Z", "2026-12-01 09:00:00Z", "2026-12-1T09:00:00Z", "12026-12-01T09:00:00Z",
            "2026-12-01T09:00:00.5+01:00", "tomorrow", "",
        ]
        result += strings(around: [
            ("2026-12-01T09:00", ":00Z"), ("2026-12-01T09:00:00Z", ""), ("", "2026-12-01T09:00:00Z"),
        ])
        return result
    }()

    @Test func liveActivityDates() throws {
        let regex = try Self.pattern(after: "\n    LiveActivityDate:")
        // A countdown's deadline (422 when refused) and an end's dismissAt (400) follow one rule.
        agree(regex, Self.dateCorpus) {
            Self.startAccepted(Self.start(state: [("deadline", .string($0))], template: "countdown"))
        }
        agree(regex, Self.dateCorpus) { date in
            (try? LiveActivityValidator.validateEnd(.object([("dismissAt", .string(date))]), rules: LiveActivityRules()))
                != nil
        }
    }
}
