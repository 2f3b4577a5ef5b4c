import Foundation
import Testing

@testable import HeraldCore

@Suite struct ReminderValidatorTests {
    static let now = Fixtures.now
    static let app = Fixtures.miniAppID
    static let inTenMinutes = ISO8601.format(now.addingTimeInterval(600))

    /// A valid body with `changes` applied: a value replaces or adds the member, nil removes it.
    static func body(_ changes: [(String, JSONValue?)] = []) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("miniAppId", .string(app)), ("title", .string("Pack drop")), ("body", .string("Your pack opens now")),
            ("deepLink", .string("basedapp://miniapp/\(app)/packs/7")), ("at", .string(inTenMinutes)),
        ]
        for (key, value) in changes {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let value { members[index].value = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return .object(members)
    }

    static func validate(_ json: JSONValue, rules: PushRules = PushRules()) throws(HeraldError) -> ReminderRequest {
        try ReminderValidator.validate(json, rules: rules, now: now)
    }

    @Test func acceptsAFullBody() throws {
        let reminder = try Self.validate(Self.body())
        #expect(
            reminder
                == ReminderRequest(
                    miniAppID: Self.app, title: "Pack drop", body: "Your pack opens now",
                    deepLink: "basedapp://miniapp/\(Self.app)/packs/7", at: Self.now.addingTimeInterval(600)))
        // Delivered as a push due at `at`, with no identifiers or partner data.
        #expect(reminder.push.sendAt == reminder.at)
        #expect(reminder.push.emails.isEmpty && reminder.push.wallets.isEmpty && reminder.push.data.isEmpty)
        #expect(reminder.push.ttlSeconds == nil)
    }

    @Test func bodyAndDeepLinkAreOptional() throws {
        let reminder = try Self.validate(Self.body([("body", nil), ("deepLink", .null)]))
        #expect(reminder.body == "")
        #expect(reminder.deepLink == nil)
    }

    @Test func anOffsetIsUnderstood() throws {
        let reminder = try Self.validate(Self.body([("at", .string("2026-06-01T14:10:00+02:00"))]))
        #expect(reminder.at == ISO8601.parse("2026-06-01T12:10:00Z"))
    }

    @Test(
        "malformed fields are 400 naming the field",
        arguments: [
            ("miniAppId", JSONValue?.none, "missing_field"),
            ("miniAppId", .string("no spaces"), "invalid_field"),
            ("miniAppId", .string(".leading.dot"), "invalid_field"),
            ("miniAppId", .number(7), "invalid_field"),
            ("title", nil, "missing_field"),
            ("title", .string(""), "invalid_field"),
            ("title", .string("   "), "invalid_field"),
            ("title", .string(String(repeating: "t", count: 121)), "invalid_field"),
            ("title", .string("bell\u{7}"), "invalid_field"),
            ("title", .string("flip\u{202E}"), "invalid_field"),
            ("title", .null, "invalid_field"),
            ("body", .string(String(repeating: "b", count: 1001)), "invalid_field"),
            ("body", .string("nul\u{0}"), "invalid_field"),
            ("body", .bool(true), "invalid_field"),
            ("deepLink", .string("basedapp://miniapp/\(Fixtures.miniAppID)/a b"), "invalid_field"),
            ("deepLink", .number(1), "invalid_field"),
            ("at", nil, "missing_field"),
            ("at", .null, "missing_field"),
            ("at", .string("tomorrow"), "invalid_field"),
            ("at", .string("2026-06-01T12:10:00"), "invalid_field"),
            ("at", .string("2026-02-30T12:00:00Z"), "invalid_field"),
            ("at", .number(1_780_000_000), "invalid_field"),
        ])
    func malformed(_ field: String, _ value: JSONValue?, _ code: String) {
        expectHeraldError(status: 400, code: code, field: field) { () throws(HeraldError) in
            _ = try Self.validate(Self.body([(field, value)]))
        }
    }

    @Test func unknownFieldsAndNonObjects() {
        expectHeraldError(status: 400, code: "unknown_field", field: "data") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("data", .object([("k", .string("v"))]))]))
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "sendAt") { () throws(HeraldError) in
            _ = try Self.validate(Self.body([("sendAt", .string(Self.inTenMinutes))]))
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "") { () throws(HeraldError) in
            _ = try Self.validate(.array([]))
        }
    }

    @Test func aDeepLinkOutsideTheMiniAppIsForbidden() {
        for link in [
            "basedapp://miniapp/other.app/x", "basedapp://miniapp/\(Self.app)x", "https://evil.example",
            "basedapp://miniapp/\(Self.app)/../other.app",
        ] {
            expectHeraldError(status: 403, code: "deep_link_forbidden", field: "deepLink") { () throws(HeraldError) in
                _ = try Self.validate(Self.body([("deepLink", .string(link))]))
            }
        }
        // The namespace is the body's miniAppId, under the configured scheme.
        var rules = PushRules()
        rules.deepLinkScheme = "hostapp"
        #expect(
            (try? Self.validate(Self.body([("deepLink", .string("hostapp://miniapp/\(Self.app)"))]), rules: rules))
                != nil)
    }

    @Test func atIsAtMostSevenDaysAheadAndAtMostFiveMinutesPast() throws {
        for offset in [7 * 86_400 + 1.0, -301, -86_400] {
            let error = expectHeraldError(status: 422, code: "at_out_of_range", field: "at") { () throws(HeraldError) in
                _ = try Self.validate(Self.body([("at", .string(ISO8601.format(Self.now.addingTimeInterval(offset))))]))
            }
            #expect(error?.message.hasPrefix("at ") == true)
        }
        // Exactly 7 days ahead is allowed; a time slightly past (clock skew) is kept as asked and due at once.
        let farthest = Self.now.addingTimeInterval(7 * 86_400)
        #expect(try Self.validate(Self.body([("at", .string(ISO8601.format(farthest)))])).at == farthest)
        let skewed = Self.now.addingTimeInterval(-30)
        #expect(try Self.validate(Self.body([("at", .string(ISO8601.format(skewed)))])).at == skewed)
    }
}

/// docs/openapi.yaml's reminder body states the push's rules for the fields the validators share
/// (PushRequestValidator's title, body and deepLink), so SchemaAgreementTests' proofs for the push's
/// patterns hold for the reminder's too.
@Suite struct ReminderSchemaTests {
    /// The `type`, `minLength`, `maxLength` and `pattern` lines of `property` in the schema `schema`.
    static func rules(_ schema: String, _ property: String) throws -> [Substring] {
        let text = SchemaAgreementTests.openAPI
        let start = try #require(text.range(of: "\n    \(schema):\n"))
        let end =
            text.range(of: "\n    [a-zA-Z]", options: .regularExpression, range: start.upperBound..<text.endIndex)
            .map(\.lowerBound) ?? text.endIndex
        let body = text[start.upperBound..<end]
        // Properties sit at 8 spaces; their rules at 10.
        let from = try #require(body.range(of: "\n        \(property):\n"))
        let next = body.range(
            of: "\n        [a-zA-Z]", options: .regularExpression, range: from.upperBound..<body.endIndex)
        return body[from.upperBound..<(next?.lowerBound ?? body.endIndex)].split(separator: "\n").filter { line in
            ["type:", "minLength:", "maxLength:", "pattern:"].contains { line.hasPrefix("          \($0)") }
        }
    }

    @Test(arguments: ["title", "body", "deepLink"])
    func theReminderFieldIsThePushField(_ property: String) throws {
        let reminder = try Self.rules("ReminderCreate", property)
        #expect(reminder.contains { $0.contains("pattern:") }, "\(reminder)")
        #expect(reminder == (try Self.rules("PushRequest", property)))
    }
}
