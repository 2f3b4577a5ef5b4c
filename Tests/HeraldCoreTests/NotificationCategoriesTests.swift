import Foundation
import Testing

@testable import HeraldCore

/// HERALD_NOTIFICATION_CATEGORIES as a list (NotificationCategories), and a push's `category` checked against it.
@Suite struct NotificationCategoriesTests {
    static let rules: PushRules = {
        var rules = PushRules()
        rules.notificationCategories = try! NotificationCategories(parsing: "INVITE,reply.quick,Pay_Now-2")
        return rules
    }()

    static func validate(category: JSONValue, rules: PushRules = rules) throws(HeraldError) -> PushRequest {
        try PushRequestValidator.validate(
            .object([
                ("recipients", .object([("emails", .array([.string("alice@example.com")]))])),
                ("title", .string("Invitation")), ("category", category),
            ]), miniAppID: Fixtures.miniAppID, rules: rules, now: Fixtures.now)
    }

    @Test("a list of identifiers is kept in its order; spaces around an entry are not part of it")
    func parsesAList() throws {
        #expect(try NotificationCategories(parsing: "INVITE").identifiers == ["INVITE"])
        #expect(
            try NotificationCategories(parsing: "reply, accept.invite ,Z-9_x").identifiers
                == ["reply", "accept.invite", "Z-9_x"])
        let longest = String(repeating: "a", count: 64)
        #expect(try NotificationCategories(parsing: longest).contains(longest))
        #expect(NotificationCategories.none.identifiers.isEmpty)
        #expect(PushRules().notificationCategories == .none)
    }

    @Test(
        "an entry that is empty, too long or holds another character is refused by its position",
        arguments: [
            ("a,,b", 2), ("a,", 2), (",a", 1), (String(repeating: "a", count: 65), 1), ("ok,two words", 2),
            ("ok,caf\u{E9}", 2), ("a/b", 1), ("ok,x\"y", 2), ("ok,ok2,a:b", 3), (" ", 1),
        ])
    func refusesABadEntry(_ text: String, _ position: Int) {
        let problem = #expect(throws: NotificationCategories.ListProblem.self) {
            try NotificationCategories(parsing: text)
        }
        #expect(problem == .invalidIdentifier(position: position))
        #expect(problem?.description == "entry \(position) must be 1-64 of [A-Za-z0-9._-]")
    }

    @Test("a repeated identifier is refused, naming both positions but neither value")
    func refusesADuplicate() throws {
        let problem = #expect(throws: NotificationCategories.ListProblem.self) {
            try NotificationCategories(parsing: "INVITE,reply, INVITE")
        }
        #expect(problem == .duplicate(position: 3, first: 1))
        #expect(problem?.description == "entry 3 repeats entry 1")
        // Identifiers are compared as the app registers them: case matters.
        #expect(try NotificationCategories(parsing: "invite,INVITE").identifiers.count == 2)
    }

    @Test("a configured category is kept, null or absent is none")
    func acceptsAConfiguredCategory() throws {
        #expect(try Self.validate(category: .string("reply.quick")).category == "reply.quick")
        #expect(try Self.validate(category: .string("Pay_Now-2")).category == "Pay_Now-2")
        #expect(try Self.validate(category: .null).category == nil)
        #expect(try Fixtures.request().category == nil)
    }

    @Test(
        "a category the host app does not register is 400 unknown_category, naming the field",
        arguments: ["invite", "INVITE ", "reply", "", "OTHER", "reply.quick.more"])
    func refusesAnUnknownCategory(_ category: String) {
        let error = expectHeraldError(status: 400, code: "unknown_category", field: "category") {
            () throws(HeraldError) in _ = try Self.validate(category: .string(category))
        }
        #expect(error?.message.contains("INVITE, reply.quick, Pay_Now-2") == true)
    }

    @Test("with no category configured any category is unknown_category")
    func refusesEveryCategoryWhenNoneIsConfigured() {
        let error = expectHeraldError(status: 400, code: "unknown_category", field: "category") {
            () throws(HeraldError) in _ = try Self.validate(category: .string("INVITE"), rules: PushRules())
        }
        #expect(error?.message.contains("registers no notification category") == true)
    }

    @Test(
        "a category that is not a string is 400 invalid_field",
        arguments: [
            JSONValue.number(1), .bool(true), .array([.string("INVITE")]), .object([("id", .string("INVITE"))]),
        ])
    func refusesAnotherType(_ category: JSONValue) {
        let error = expectHeraldError(status: 400, code: "invalid_field", field: "category") {
            () throws(HeraldError) in _ = try Self.validate(category: category)
        }
        #expect(error?.message == "category must be a string.")
    }

    @Test("a partner's data.category is refused in any letter case: the FCM data carries Herald's own")
    func dataCategoryIsReserved() {
        for key in ["category", "Category", "CATEGORY"] {
            #expect(PushRules.isReservedDataKey(key))
            expectHeraldError(status: 400, code: "invalid_field", field: "data.\(key)") { () throws(HeraldError) in
                _ = try PushRequestValidator.validate(
                    .object([
                        ("recipients", .object([("emails", .array([.string("alice@example.com")]))])),
                        ("title", .string("t")), ("data", .object([(key, .string("INVITE"))])),
                    ]), miniAppID: Fixtures.miniAppID, rules: Self.rules, now: Fixtures.now)
            }
        }
        #expect(!PushRules.isReservedDataKey("categoryName") && !PushRules.isReservedDataKey("categories"))
    }
}
