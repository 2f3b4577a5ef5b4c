import Foundation
import HeraldCore
import Testing

/// Text that hides or reorders: every text a partner shows a user refuses invisible and bidirectional characters
/// with 400 naming the field, the zero-width joiner is allowed only inside an emoji sequence, and a push title
/// cannot open with a forged brand prefix.
@Suite struct TextRulesTests {
    /// Each refused wherever it stands.
    static let hiding: [Unicode.Scalar] = [
        "\u{200B}", "\u{200C}", "\u{2060}", "\u{FEFF}", "\u{00AD}",
        "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}",
        "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200E}", "\u{200F}", "\u{061C}",
    ]

    /// Joined emoji as phones draw them: a family, a rainbow flag (after U+FE0F), a health worker (a dingbat),
    /// a black cat (U+2B1B), a head shaking sideways (an arrow), a technologist with a skin tone.
    static let emojiSequences = [
        "👨\u{200D}👩\u{200D}👧\u{200D}👦", "🏳\u{FE0F}\u{200D}🌈", "👩\u{200D}⚕\u{FE0F}", "🐈\u{200D}⬛",
        "🙂\u{200D}↔\u{FE0F}", "👩🏽\u{200D}💻",
    ]

    /// A joiner with a letter, a space or nothing on one side.
    static let strayJoiners = [
        "a\u{200D}b", "\u{200D}", "\u{200D}😀", "😀\u{200D}", "a\u{200D}😀", "😀\u{200D}a", "😀 \u{200D}😀",
        "😀\u{200D}\u{200D}😀",
    ]

    @Test(arguments: hiding)
    func hidingCharactersAreRefusedEverywhere(_ scalar: Unicode.Scalar) {
        let text = "Pay" + String(Character(scalar)) + "Pal"
        #expect(TextRules.isForbidden(scalar))
        #expect(TextRules.containsForbidden(text))
        #expect(TextRules.containsForbidden(text, allowing: TextRules.bodyWhitespace))
        #expect(TextRules.containsForbiddenOrWhitespace(text))
    }

    @Test(arguments: emojiSequences)
    func aJoinerBetweenTwoEmojiIsAllowed(_ text: String) throws {
        #expect(!TextRules.containsForbidden(text))
        #expect(!TextRules.containsForbidden("Family " + text + " day"))
        let push = try PushRequestValidatorTests.validate(
            PushRequestValidatorTests.body([
                ("title", .string(text)), ("body", .string("Hello " + text)), ("data", .object([("k", .string(text))])),
            ]))
        #expect(push.title == text)
    }

    @Test(arguments: strayJoiners)
    func aJoinerOutsideAnEmojiSequenceIsRefused(_ text: String) {
        #expect(TextRules.containsForbidden(text))
        expectHeraldError(status: 400, code: "invalid_field", field: "title") { () throws(HeraldError) in
            _ = try PushRequestValidatorTests.validate(PushRequestValidatorTests.body([("title", .string(text))]))
        }
    }

    /// The push's title, body and data, a Live Activity's alert, attributes and state text, a reminder's title
    /// and body: each names its field.
    @Test(arguments: hiding + ["\u{200D}"])
    func everyShownTextNamesItsField(_ scalar: Unicode.Scalar) {
        let hidden = "total " + String(Character(scalar)) + "100"
        for field in ["title", "body"] {
            expectHeraldError(status: 400, code: "invalid_field", field: field) { () throws(HeraldError) in
                _ = try PushRequestValidatorTests.validate(PushRequestValidatorTests.body([(field, .string(hidden))]))
            }
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "data.note") { () throws(HeraldError) in
            _ = try PushRequestValidatorTests.validate(
                PushRequestValidatorTests.body([("data", .object([("note", .string(hidden))]))]))
        }
        let rules = LiveActivityRules()
        let state: [(String, JSONValue)] = [
            ("stages", .array([.string("a")])), ("currentStage", .number(0)),
            ("progress", .number(0)),
        ]
        func start(
            attributes: [(String, JSONValue)] = [("title", .string("t"))],
            state: [(String, JSONValue)] = state, alert: [(String, JSONValue)]? = nil
        ) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("recipient", .object([("email", .string("a@x.io"))])), ("template", .string("progress")),
                ("attributes", .object(attributes)), ("state", .object(state)),
            ]
            if let alert { members.append(("alert", .object(alert))) }
            return .object(members)
        }
        let starts: [(String, JSONValue)] = [
            ("alert.title", start(alert: [("title", .string(hidden))])),
            ("alert.body", start(alert: [("title", .string("t")), ("body", .string(hidden))])),
            ("attributes.title", start(attributes: [("title", .string(hidden))])),
            (
                "state.stages[0]",
                start(state: [
                    ("stages", .array([.string(hidden)])), ("currentStage", .number(0)),
                    ("progress", .number(0)),
                ])
            ),
        ]
        for (field, json) in starts {
            let error = heraldError { () throws(HeraldError) in
                _ = try LiveActivityValidator.validateStart(json, rules: rules)
            }
            #expect(error?.status == 400 && error?.field == field, "\(field): \(String(describing: error))")
        }
        for field in ["title", "body"] {
            let reminder = JSONValue.object([
                ("miniAppId", .string("fun.pull.gacha")), ("title", .string(field == "title" ? hidden : "t")),
                ("body", .string(field == "body" ? hidden : "")), ("at", .string(ISO8601.format(Fixtures.now))),
            ])
            expectHeraldError(status: 400, code: "invalid_field", field: field) { () throws(HeraldError) in
                _ = try ReminderValidator.validate(reminder, rules: PushRules(), now: Fixtures.now)
            }
        }
    }

    @Test(arguments: ["[Bank] Your card is blocked", " [Bank] x", "\u{3000}[x", "［Bank］ x", "["])
    func aTitleOpeningWithABracketIsRefused(_ title: String) {
        let error = expectHeraldError(status: 400, code: "title_bracket_prefix", field: "title") {
            () throws(HeraldError) in
            _ = try PushRequestValidatorTests.validate(PushRequestValidatorTests.body([("title", .string(title))]))
        }
        #expect(error?.message.contains("[") == true)
        // Reminders are shown with the same prefix.
        let reminder = JSONValue.object([
            ("miniAppId", .string("fun.pull.gacha")), ("title", .string(title)),
            ("at", .string(ISO8601.format(Fixtures.now))),
        ])
        expectHeraldError(status: 400, code: "title_bracket_prefix", field: "title") { () throws(HeraldError) in
            _ = try ReminderValidator.validate(reminder, rules: PushRules(), now: Fixtures.now)
        }
    }

    @Test(arguments: ["Deposit [1/6]", "a[", "Level ] up", "😀 [x]"])
    func bracketsAfterTheStartAreFine(_ title: String) throws {
        #expect(
            try PushRequestValidatorTests.validate(PushRequestValidatorTests.body([("title", .string(title))]))
                .title == title)
    }
}
