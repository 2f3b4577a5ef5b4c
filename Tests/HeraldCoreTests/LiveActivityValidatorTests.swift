import Foundation
import Testing

@testable import HeraldCore

@Suite struct LiveActivityValidatorTests {
    static let rules = LiveActivityRules()
    static let progressState = #"{"stages":["Ordered","Packed","Shipped"],"currentStage":0,"progress":0}"#

    /// A valid start with `changes` applied: a JSON text replaces or adds the member, nil removes it.
    static func start(_ changes: [(String, String?)] = []) throws(HeraldError) -> LiveActivityStart {
        var members: [(key: String, value: String)] = [
            ("recipient", #"{"email":"Alice@Example.com"}"#),
            ("template", #""progress""#),
            ("attributes", #"{"title":"Order #1042","subtitle":"2 items"}"#),
            ("state", progressState),
        ]
        for (key, value) in changes {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let value { members[index].value = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return try LiveActivityValidator.validateStart(
            parse("{" + members.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"),
            rules: rules)
    }

    static func parse(_ document: String) -> JSONValue {
        do { return try JSONParser.parse(document) } catch { fatalError("bad test JSON: \(document)") }
    }

    static func update(_ document: String) throws(HeraldError) -> LiveActivityChange {
        try LiveActivityValidator.validateUpdate(parse(document), rules: rules)
    }

    static func end(_ document: String?) throws(HeraldError) -> LiveActivityChange {
        try LiveActivityValidator.validateEnd(document.map(parse), rules: rules)
    }

    // MARK: Start

    @Test func acceptsTheSpecShape() throws {
        let start = try Self.start([
            ("ttlSeconds", "3600"), ("alert", #"{"title":"On its way","body":"Packed\nin Rotterdam"}"#),
        ])
        #expect(
            start
                == LiveActivityStart(
                    recipient: .email("alice@example.com"), template: .progress,
                    attributes: .init(title: "Order #1042", subtitle: "2 items"),
                    state: .progress(.init(stages: ["Ordered", "Packed", "Shipped"], currentStage: 0, progress: 0)),
                    ttlSeconds: 3600, alert: .init(title: "On its way", body: "Packed\nin Rotterdam")))
    }

    @Test func defaultsTheTTLAndLeavesTheAlertToTheRenderer() throws {
        let start = try Self.start()
        #expect(start.ttlSeconds == 1_800)
        #expect(start.alert == nil)
        #expect(start.attributes.subtitle == "2 items")
    }

    @Test func startAtIsHeldUpTo7DaysAheadAndMeansNowWhenPastOrWithinSeconds() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let rules = Self.rules
        #expect(try Self.start().startAt == nil)
        let given = try Self.start([("startAt", #""2027-01-15T08:00:00+01:00""#)]).startAt
        #expect(given == ISO8601.parse("2027-01-15T07:00:00Z"))
        for bad in [#""tomorrow""#, #""2027-01-15T08:00:00""#, "1700000000"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "startAt") { () throws(HeraldError) in
                _ = try Self.start([("startAt", bad)])
            }
        }
        #expect(try rules.scheduledStart(nil, now: now) == nil)
        #expect(try rules.scheduledStart(now.addingTimeInterval(-86_400), now: now) == nil, "a past time is now")
        #expect(try rules.scheduledStart(now.addingTimeInterval(rules.scheduleLead), now: now) == nil)
        let soon = now.addingTimeInterval(rules.scheduleLead + 1)
        #expect(try rules.scheduledStart(soon, now: now) == soon)
        let edge = now.addingTimeInterval(7 * 86_400)
        #expect(try rules.scheduledStart(edge, now: now) == edge)
        expectHeraldError(status: 422, code: "start_at_out_of_range", field: "startAt") { () throws(HeraldError) in
            _ = try rules.scheduledStart(edge.addingTimeInterval(1), now: now)
        }
    }

    @Test func relevanceScoreIsAWholeNumberFrom0To100DefaultingTo50() throws {
        #expect(try Self.start().relevanceScore == 50)
        #expect(try Self.start([("relevanceScore", "0")]).relevanceScore == 0)
        #expect(try Self.start([("relevanceScore", "100")]).relevanceScore == 100)
        #expect(try Self.start([("relevanceScore", "null")]).relevanceScore == 50)
        for bad in ["-1", "101", "50.5", #""50""#, "true"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "relevanceScore") { () throws(HeraldError) in
                _ = try Self.start([("relevanceScore", bad)])
            }
            expectHeraldError(status: 400, code: "invalid_field", field: "relevanceScore") { () throws(HeraldError) in
                _ = try Self.update(#"{"relevanceScore":\#(bad)}"#)
            }
        }
        // An update may change only the score; without one it keeps the activity's.
        #expect(try Self.update(#"{"relevanceScore":90}"#).relevanceScore == 90)
        #expect(try Self.update(#"{"state":{"progress":0.5}}"#).relevanceScore == nil)
        expectHeraldError(status: 400, code: "unknown_field", field: "relevanceScore") { () throws(HeraldError) in
            _ = try Self.end(#"{"relevanceScore":90}"#)
        }
    }

    @Test func everyTemplateStarts() throws {
        #expect(
            try Self.start([
                ("template", #""status""#), ("state", #"{"statusLabel":"Pending","statusVariant":"pending"}"#),
            ])
            .state == .status(.init(statusLabel: "Pending", statusVariant: .pending)))
        #expect(
            try Self.start([("template", #""countdown""#), ("state", #"{"deadline":"2026-06-01T00:45:00Z"}"#)])
                .template == .countdown)
    }

    @Test func theBodyMustBeAnObjectOfKnownFields() {
        expectHeraldError(status: 400, code: "invalid_field", field: "") { () throws(HeraldError) in
            _ = try LiveActivityValidator.validateStart(.array([]), rules: Self.rules)
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "icon") { () throws(HeraldError) in
            _ = try Self.start([("icon", #""x.png""#)])
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "displayName") { () throws(HeraldError) in
            _ = try Self.start([("displayName", #""Bank""#)])
        }
    }

    @Test func recipientRules() throws {
        #expect(
            try Self.start([("recipient", #"{"wallet":"0xABCDEF0123456789abcdef0123456789ABCDEF01"}"#)]).recipient
                == .wallet("0xabcdef0123456789abcdef0123456789abcdef01"))
        #expect(
            try Self.start([("recipient", #"{"email":"bob@example.com","wallet":null}"#)]).recipient
                == .email("bob@example.com"))
        expectHeraldError(status: 400, code: "missing_field", field: "recipient") { () throws(HeraldError) in
            _ = try Self.start([("recipient", nil)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient") { () throws(HeraldError) in
            _ = try Self.start([("recipient", #""alice@example.com""#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient") { () throws(HeraldError) in
            _ = try Self.start([("recipient", "{}")])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient") { () throws(HeraldError) in
            _ = try Self.start([
                ("recipient", #"{"email":"a@example.com","wallet":"0xabcdef0123456789abcdef0123456789abcdef01"}"#)
            ])
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "recipient.emails") { () throws(HeraldError) in
            _ = try Self.start([("recipient", #"{"emails":["a@example.com"]}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient.email") { () throws(HeraldError) in
            _ = try Self.start([("recipient", #"{"email":"not an email"}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient.email") { () throws(HeraldError) in
            _ = try Self.start([("recipient", #"{"email":["a@example.com"]}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "recipient.wallet") { () throws(HeraldError) in
            _ = try Self.start([("recipient", #"{"wallet":"0x123"}"#)])
        }
    }

    @Test func templateRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "template") { () throws(HeraldError) in
            _ = try Self.start([("template", nil)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "template") { () throws(HeraldError) in
            _ = try Self.start([("template", "1")])
        }
        let error = expectHeraldError(status: 422, code: "unknown_template", field: "template") {
            () throws(HeraldError) in
            _ = try Self.start([("template", #""map""#)])
        }
        #expect(error?.message.contains("progress, status, countdown") == true)
        expectHeraldError(status: 422, code: "unknown_template", field: "template") { () throws(HeraldError) in
            _ = try Self.start([("template", #""Progress""#)])
        }
    }

    @Test func attributesRules() throws {
        #expect(
            try Self.start([("attributes", #"{"title":"\#(String(repeating: "😀", count: 120))"}"#)]).attributes.subtitle
                == nil)
        expectHeraldError(status: 400, code: "missing_field", field: "attributes") { () throws(HeraldError) in
            _ = try Self.start([("attributes", nil)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "attributes") { () throws(HeraldError) in
            _ = try Self.start([("attributes", #""T""#)])
        }
        expectHeraldError(status: 400, code: "missing_field", field: "attributes.title") { () throws(HeraldError) in
            _ = try Self.start([("attributes", #"{"subtitle":"s"}"#)])
        }
        for bad in [#""""#, #"" ""#, #""\#(String(repeating: "a", count: 121))""#, #""a\u2067b""#, #""a\tb""#, "5"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "attributes.title") { () throws(HeraldError) in
                _ = try Self.start([("attributes", #"{"title":\#(bad)}"#)])
            }
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "attributes.subtitle") { () throws(HeraldError) in
            _ = try Self.start([("attributes", #"{"title":"t","subtitle":"\#(String(repeating: "a", count: 121))"}"#)])
        }
        // The icon and the brand come from the partner row, never from the partner's body.
        expectHeraldError(status: 400, code: "unknown_field", field: "attributes.iconUrl") { () throws(HeraldError) in
            _ = try Self.start([("attributes", #"{"title":"t","iconUrl":"https://x.example/i.png"}"#)])
        }
    }

    @Test func stateRulesNameTheirPath() {
        expectHeraldError(status: 400, code: "missing_field", field: "state") { () throws(HeraldError) in
            _ = try Self.start([("state", nil)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state") { () throws(HeraldError) in
            _ = try Self.start([("state", "[]")])
        }
        expectHeraldError(status: 422, code: "invalid_state", field: "state.currentStage") { () throws(HeraldError) in
            _ = try Self.start([("state", #"{"stages":["a"],"currentStage":1,"progress":0}"#)])
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "state.deadline") { () throws(HeraldError) in
            _ = try Self.start([("state", #"{"stages":["a"],"currentStage":0,"progress":0,"deadline":"x"}"#)])
        }
        // The state is read under the template named in the body.
        expectHeraldError(status: 400, code: "unknown_field", field: "state.stages") { () throws(HeraldError) in
            _ = try Self.start([("template", #""status""#)])
        }
    }

    @Test func ttlRules() throws {
        #expect(try Self.start([("ttlSeconds", "1")]).ttlSeconds == 1)
        #expect(try Self.start([("ttlSeconds", "28800")]).ttlSeconds == 28_800)
        #expect(try Self.start([("ttlSeconds", "null")]).ttlSeconds == 1_800)
        for bad in ["0", "28801", "1.5", #""60""#, "-5"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "ttlSeconds") { () throws(HeraldError) in
                _ = try Self.start([("ttlSeconds", bad)])
            }
        }
    }

    @Test func alertRules() throws {
        #expect(try Self.start([("alert", #"{"title":"Hi"}"#)]).alert == LiveActivityAlert(title: "Hi", body: ""))
        _ = try Self.start([("alert", #"{"title":"Hi","body":"\#(String(repeating: "😀", count: 1_000))"}"#)])
        expectHeraldError(status: 400, code: "invalid_field", field: "alert") { () throws(HeraldError) in
            _ = try Self.start([("alert", #""Hi""#)])
        }
        expectHeraldError(status: 400, code: "missing_field", field: "alert.title") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"body":"b"}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "alert.title") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"title":"a\nb"}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "alert.title") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"title":"\#(String(repeating: "a", count: 121))"}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "alert.body") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"title":"t","body":"\#(String(repeating: "a", count: 1_001))"}"#)])
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "alert.body") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"title":"t","body":"a\u202Eb"}"#)])
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "alert.sound") { () throws(HeraldError) in
            _ = try Self.start([("alert", #"{"title":"t","sound":"default"}"#)])
        }
    }

    // MARK: Update

    @Test func anUpdateKeepsTheRawPatch() throws {
        let change = try Self.update(#"{"state":{"progress":0.5,"statusText":null},"ttlSeconds":7200}"#)
        #expect(change.statePatch == Self.parse(#"{"progress":0.5,"statusText":null}"#))
        #expect(change.ttlSeconds == 7_200)
        #expect(change.alert == nil && change.dismissAt == nil)
    }

    @Test func anUpdateMayCarryOnlyAnAlertOrOnlyATTL() throws {
        #expect(
            try Self.update(#"{"alert":{"title":"Shipped","body":"b"}}"#)
                == LiveActivityChange(alert: .init(title: "Shipped", body: "b")))
        #expect(try Self.update(#"{"ttlSeconds":60}"#) == LiveActivityChange(ttlSeconds: 60))
    }

    @Test func updateRules() {
        expectHeraldError(status: 400, code: "missing_field", field: "state") { () throws(HeraldError) in
            _ = try Self.update("{}")
        }
        expectHeraldError(status: 400, code: "missing_field", field: "state") { () throws(HeraldError) in
            _ = try Self.update(#"{"state":null}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state") { () throws(HeraldError) in
            _ = try Self.update(#"{"state":[1]}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "") { () throws(HeraldError) in
            _ = try Self.update("[]")
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "dismissAt") { () throws(HeraldError) in
            _ = try Self.update(#"{"state":{},"dismissAt":"2026-06-01T00:00:00Z"}"#)
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "template") { () throws(HeraldError) in
            _ = try Self.update(#"{"template":"status"}"#)
        }
        for bad in ["0", "28801", "2.5"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "ttlSeconds") { () throws(HeraldError) in
                _ = try Self.update(#"{"ttlSeconds":\#(bad)}"#)
            }
        }
        expectHeraldError(status: 400, code: "missing_field", field: "alert.title") { () throws(HeraldError) in
            _ = try Self.update(#"{"alert":{}}"#)
        }
    }

    // MARK: End

    @Test func anEndNeedsNoBody() throws {
        #expect(try Self.end(nil) == LiveActivityChange())
        #expect(try Self.end("{}") == LiveActivityChange())
    }

    @Test func anEndCarriesStateAlertAndDismissAt() throws {
        let change = try Self.end(
            #"{"state":{"statusVariant":"success"},"alert":{"title":"Done"},"dismissAt":"2026-06-01T02:00:00+02:00"}"#)
        #expect(change.statePatch == Self.parse(#"{"statusVariant":"success"}"#))
        #expect(change.alert == LiveActivityAlert(title: "Done"))
        #expect(change.dismissAt == ISO8601.parse("2026-06-01T00:00:00Z"))
        #expect(change.ttlSeconds == nil)
    }

    @Test func endRules() {
        for bad in [#""tomorrow""#, #""2026-06-01T00:00:00""#, "1780272000"] {
            expectHeraldError(status: 400, code: "invalid_field", field: "dismissAt") { () throws(HeraldError) in
                _ = try Self.end(#"{"dismissAt":\#(bad)}"#)
            }
        }
        expectHeraldError(status: 400, code: "unknown_field", field: "ttlSeconds") { () throws(HeraldError) in
            _ = try Self.end(#"{"ttlSeconds":60}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "state") { () throws(HeraldError) in
            _ = try Self.end(#"{"state":"done"}"#)
        }
        expectHeraldError(status: 400, code: "invalid_field", field: "") { () throws(HeraldError) in
            _ = try Self.end("null")
        }
    }

    // MARK: Rules

    @Test func defaultRulesAreTheSpecs() {
        let rules = LiveActivityRules()
        #expect(rules.ttlRange == 1...28_800)
        #expect(rules.defaultTTLSeconds == 1_800)
        #expect(rules.maxDuration == 8 * 3600)
        #expect(rules.maxDismissalDelay == 4 * 3600)
        #expect(rules.stageCount == 1...8)
    }

    @Test func anExpiryNeverPassesEightHoursFromTheStart() throws {
        let rules = LiveActivityRules()
        let started = Fixtures.now
        #expect(
            try rules.expiresAt(startedAt: started, now: started, ttlSeconds: 1_800)
                == started.addingTimeInterval(1_800))
        #expect(
            try rules.expiresAt(startedAt: started, now: started, ttlSeconds: 28_800)
                == started.addingTimeInterval(8 * 3600))
        let later = started.addingTimeInterval(7 * 3600)
        #expect(
            try rules.expiresAt(startedAt: started, now: later, ttlSeconds: 1_800)
                == started.addingTimeInterval(7.5 * 3600))
        #expect(
            try rules.expiresAt(startedAt: started, now: later, ttlSeconds: 3_600)
                == started.addingTimeInterval(8 * 3600))
        expectHeraldError(status: 422, code: "ttl_beyond_limit", field: "ttlSeconds") { () throws(HeraldError) in
            _ = try rules.expiresAt(startedAt: started, now: later, ttlSeconds: 3_602)
        }
    }

    @Test func dismissalDates() throws {
        let rules = LiveActivityRules()
        let ended = Fixtures.now
        #expect(try rules.dismissalDate(requested: nil, endedAt: ended) == ended.addingTimeInterval(4 * 3600))
        #expect(
            try rules.dismissalDate(requested: ended.addingTimeInterval(600), endedAt: ended)
                == ended.addingTimeInterval(600))
        #expect(try rules.dismissalDate(requested: ended.addingTimeInterval(-600), endedAt: ended) == ended)
        #expect(
            try rules.dismissalDate(requested: ended.addingTimeInterval(4 * 3600), endedAt: ended)
                == ended.addingTimeInterval(4 * 3600))
        expectHeraldError(status: 422, code: "dismiss_at_out_of_range", field: "dismissAt") { () throws(HeraldError) in
            _ = try rules.dismissalDate(requested: ended.addingTimeInterval(4 * 3600 + 1), endedAt: ended)
        }
    }

    @Test func attributesAndAlertsRoundTripTheirStoredForm() throws {
        for attributes in [LiveActivityAttributes(title: "T", subtitle: "S"), LiveActivityAttributes(title: "T")] {
            #expect(
                try LiveActivityAttributes.decode(try JSONParser.parse(JSONWriter.bytes(attributes.json))) == attributes
            )
        }
        #expect(JSONWriter.string(LiveActivityAttributes(title: "T").json) == #"{"title":"T"}"#)
        let alert = LiveActivityAlert(title: "T", body: "a\nb")
        #expect(JSONWriter.string(alert.json) == #"{"title":"T","body":"a\nb"}"#)
        #expect(try LiveActivityAlert.decode(alert.json) == alert)
    }
}
