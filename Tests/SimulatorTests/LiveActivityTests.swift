import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// Live Activity payloads as the simulator would have to see them from Herald's worker: start, update and
/// end bodies with one thing changed each (`with`, `without`), sent over real HTTP/2 with the Live Activity
/// headers.
enum LiveActivityPayloads {
    static let topic = "app.herald.demo.push-type.liveactivity"
    /// A push-to-start token: hex, but not the 32 bytes of a device token.
    static let startToken = String(repeating: "5a", count: 80)
    static let updateToken = String(repeating: "c3", count: 40)

    /// `aps` members, in order; `nil` values are left out.
    typealias Members = [(String, String?)]

    static let start: Members = [
        ("timestamp", "1750000000"), ("event", #""start""#),
        ("content-state", #"{"stage":0,"progress":0.25}"#),
        ("attributes-type", #""ProgressAttributes""#),
        ("attributes", #"{"displayName":"Pull","stages":["queued","rolling","done"]}"#),
        ("alert", #"{"title":"Your pull started","body":"Rolling now","sound":"default"}"#),
        ("input-push-token", "1"), ("stale-date", "1750001800"), ("relevance-score", "75"),
    ]
    static let update: Members = [
        ("timestamp", "1750000060"), ("event", #""update""#), ("content-state", #"{"stage":1,"progress":0.5}"#),
        ("stale-date", "1750001800"),
    ]
    static let end: Members = [
        ("timestamp", "1750000120"), ("event", #""end""#), ("content-state", #"{"stage":2,"progress":1}"#),
        ("dismissal-date", "1750000420"),
    ]

    /// `base` with `changes` applied: a member replaced (or removed with nil), or added at the end.
    static func with(_ base: Members, _ changes: Members = []) -> Members {
        var members = base
        for (key, value) in changes {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = value
            } else {
                members.append((key, value))
            }
        }
        return members
    }

    static func without(_ base: Members, _ keys: String...) -> Members {
        with(base, keys.map { ($0, nil) })
    }

    /// `{"aps":{...},"herald":{...}}`: keys outside `aps` are the app's own.
    static func body(_ members: Members) -> [UInt8] {
        let aps = members.compactMap { key, value in value.map { "\"\(key)\":\($0)" } }.joined(separator: ",")
        return Array(#"{"aps":{\#(aps)},"herald":{"activityId":"0190a6e4-8f4c-7cc1-b3a1-2f3b9e0c1d2e"}}"#.utf8)
    }
}

extension SimulatorHarness {
    /// A Live Activity push: the valid headers, push type `liveactivity` to the app's Live Activity topic.
    func liveActivity(
        _ body: [UInt8], token: String = LiveActivityPayloads.updateToken, priority: String? = "10",
        replacing: [String: String?] = [:]
    ) async throws -> HTTP2Response {
        var headers: [String: String?] = [
            "apns-push-type": "liveactivity", "apns-topic": LiveActivityPayloads.topic, "apns-priority": priority,
        ]
        headers.merge(replacing) { _, new in new }
        return try await apns(token: token, replacing: headers, body: body)
    }
}

/// A payload that breaks one rule, and the detail the simulator records for it.
struct LiveActivityCase: Sendable, CustomTestStringConvertible {
    var name: String
    var body: [UInt8]
    var detail: String

    init(_ name: String, _ members: LiveActivityPayloads.Members, _ detail: String) {
        self.name = name
        self.body = LiveActivityPayloads.body(members)
        self.detail = detail
    }

    init(_ name: String, raw: String, _ detail: String) {
        self.name = name
        self.body = Array(raw.utf8)
        self.detail = detail
    }

    var testDescription: String { name }
}

@Suite("Live Activity pushes")
struct LiveActivityTests {
    typealias P = LiveActivityPayloads

    static let refused: [LiveActivityCase] = [
        LiveActivityCase("start without alert", P.without(P.start, "alert"), "aps.alert is required on start"),
        LiveActivityCase(
            "start with an empty alert", P.with(P.start, [("alert", "{}")]),
            "aps.alert needs a title or a body on start"),
        LiveActivityCase(
            "start with an alert of a sound only", P.with(P.start, [("alert", #"{"sound":"default"}"#)]),
            "aps.alert needs a title or a body on start"),
        LiveActivityCase(
            "start with an empty title and no body",
            P.with(P.start, [("alert", #"{"title":"","sound":"default"}"#)]),
            "aps.alert needs a title or a body on start"),
        LiveActivityCase(
            "start with a string alert", P.with(P.start, [("alert", #""Started""#)]),
            "aps.alert must be an object"),
        LiveActivityCase(
            "start without attributes-type", P.without(P.start, "attributes-type"),
            "aps.attributes-type (a non-empty string) is required on start"),
        LiveActivityCase(
            "start with an empty attributes-type", P.with(P.start, [("attributes-type", #""""#)]),
            "aps.attributes-type (a non-empty string) is required on start"),
        LiveActivityCase(
            "start with a numeric attributes-type", P.with(P.start, [("attributes-type", "7")]),
            "aps.attributes-type (a non-empty string) is required on start"),
        LiveActivityCase(
            "start without attributes", P.without(P.start, "attributes"),
            "aps.attributes (an object) is required on start"),
        LiveActivityCase(
            "start with attributes an array", P.with(P.start, [("attributes", "[1]")]),
            "aps.attributes (an object) is required on start"),
        LiveActivityCase(
            "start without content-state", P.without(P.start, "content-state"),
            "aps.content-state is required on start"),
        LiveActivityCase(
            "update without content-state", P.without(P.update, "content-state"),
            "aps.content-state is required on update"),
        LiveActivityCase(
            "content-state a string", P.with(P.update, [("content-state", #""{\"stage\":1}""#)]),
            "aps.content-state must be an object"),
        LiveActivityCase(
            "end with content-state null", P.with(P.end, [("content-state", "null")]),
            "aps.content-state must be an object"),
        LiveActivityCase(
            "event pause", P.with(P.update, [("event", #""pause""#)]), "aps.event must be start, update or end"),
        LiveActivityCase(
            "event in capitals", P.with(P.update, [("event", #""UPDATE""#)]),
            "aps.event must be start, update or end"),
        LiveActivityCase(
            "event a number", P.with(P.update, [("event", "1")]), "aps.event must be start, update or end"),
        LiveActivityCase("no event", P.without(P.update, "event"), "aps.event is required"),
        LiveActivityCase("no timestamp", P.without(P.update, "timestamp"), "aps.timestamp is required"),
        LiveActivityCase(
            "string timestamp", P.with(P.update, [("timestamp", #""1750000060""#)]),
            "aps.timestamp must be a whole number of UNIX seconds"),
        LiveActivityCase(
            "fractional timestamp", P.with(P.update, [("timestamp", "1750000060.5")]),
            "aps.timestamp must be a whole number of UNIX seconds"),
        LiveActivityCase(
            "negative timestamp", P.with(P.update, [("timestamp", "-1")]),
            "aps.timestamp must be a whole number of UNIX seconds"),
        LiveActivityCase(
            "string stale-date", P.with(P.update, [("stale-date", #""1750001800""#)]),
            "aps.stale-date must be a number of UNIX seconds"),
        LiveActivityCase(
            "ISO 8601 dismissal-date", P.with(P.end, [("dismissal-date", #""2025-06-15T15:07:00Z""#)]),
            "aps.dismissal-date must be a number of UNIX seconds"),
        LiveActivityCase(
            "input-push-token 0", P.with(P.start, [("input-push-token", "0")]), "aps.input-push-token must be 1"),
        LiveActivityCase(
            "input-push-token true", P.with(P.start, [("input-push-token", "true")]),
            "aps.input-push-token must be 1"),
        LiveActivityCase(
            "relevance-score a string", P.with(P.update, [("relevance-score", #""high""#)]),
            "aps.relevance-score must be a number"),
        LiveActivityCase(
            "update with a string alert", P.with(P.update, [("alert", #""Halfway""#)]),
            "aps.alert must be an object"),
        LiveActivityCase("no aps", raw: #"{"herald":{"activityId":"x"}}"#, "aps is required"),
        LiveActivityCase("aps an array", raw: #"{"aps":[1]}"#, "aps must be an object"),
        LiveActivityCase(
            "payload an array", raw: "[1,2]", "the payload must be a JSON object (without duplicate keys)"),
        LiveActivityCase(
            "payload malformed", raw: #"{"aps":{"event":}}"#,
            "the payload must be a JSON object (without duplicate keys)"),
        LiveActivityCase(
            "duplicate event", raw: #"{"aps":{"timestamp":1,"event":"update","event":"end","content-state":{}}}"#,
            "the payload must be a JSON object (without duplicate keys)"),
    ]

    @Test(
        "a payload that breaks a Live Activity rule is 400 PayloadEmpty, and the record says which rule",
        arguments: refused)
    func refusedPayload(_ test: LiveActivityCase) async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.liveActivity(test.body)
        #expect(response.status == 400)
        #expect(response.reason == "PayloadEmpty")
        // The answer is APNs' shape: the reason only, never the simulator's detail.
        #expect(response.json?.objectMembers?.map { $0.key } == ["reason"])
        #expect(response.header("apns-id").map(Identifiers.isLowercaseUUID) == true)
        let record = try #require(harness.simulator.received().last)
        #expect(record.status == 400)
        #expect(record.reason == "PayloadEmpty")
        #expect(record.detail == test.detail)
        #expect(record.body == test.body)
    }

    @Test("start, update and end as Apple documents them are accepted, with every optional key")
    func acceptedPayloads() async throws {
        let harness = try SimulatorHarness()
        let accepted: [(String, LiveActivityPayloads.Members, String)] = [
            ("start", P.start, P.startToken),
            (
                "start with only the required keys",
                P.without(P.start, "input-push-token", "stale-date", "relevance-score"), P.startToken
            ),
            (
                "start with a localized alert title and no body",
                P.with(P.start, [("alert", #"{"title":{"loc-key":"%@ started","loc-args":["Pull"]}}"#)]), P.startToken
            ),
            ("start with a body only", P.with(P.start, [("alert", #"{"body":"Rolling now"}"#)]), P.startToken),
            ("update", P.update, P.updateToken),
            (
                "update with an alert and a relevance score",
                P.with(
                    P.update, [("alert", #"{"title":"Halfway","body":"Stage 2 of 3"}"#), ("relevance-score", "0.5")]),
                P.updateToken
            ),
            (
                "update with an exponent timestamp and a fractional stale-date",
                P.with(P.update, [("timestamp", "1.75000006e9"), ("stale-date", "1750001800.25")]), P.updateToken
            ),
            (
                "update with keys Apple does not define", P.with(P.update, [("x-herald-sequence", "4")]),
                P.updateToken
            ),
            ("end", P.end, P.updateToken),
            (
                "end without content-state or dismissal-date", P.without(P.end, "content-state", "dismissal-date"),
                P.updateToken
            ),
            (
                "end with a dismissal-date in the past (dismiss now)", P.with(P.end, [("dismissal-date", "0")]),
                P.updateToken
            ),
            // Apple documents dismissal-date's effect on end only, and no refusal elsewhere (APNSwift sends it on
            // start and update): the device ignores it there, so APNs takes it.
            ("update with a dismissal-date", P.with(P.update, [("dismissal-date", "1750003600")]), P.updateToken),
            ("start with a dismissal-date", P.with(P.start, [("dismissal-date", "1750003600")]), P.startToken),
        ]
        for (name, members, token) in accepted {
            for priority in ["10", "5", nil] {
                let response = try await harness.liveActivity(P.body(members), token: token, priority: priority)
                #expect(response.status == 200, "\(name) at priority \(priority ?? "none"): \(response.reason ?? "")")
            }
        }
        #expect(harness.simulator.received().allSatisfy { $0.status == 200 && $0.detail == nil })
    }

    @Test("the headers still decide first: topic suffix, push type and priority")
    func headerRules() async throws {
        let harness = try SimulatorHarness()
        let body = P.body(P.update)
        let cases: [([String: String?], String)] = [
            (["apns-topic": "app.herald.demo"], "InvalidPushType"),
            (["apns-topic": "app.herald.demo.push-type.widgets"], "InvalidPushType"),
            (["apns-topic": "app.herald.demo.push-type.liveactivity.extra"], "InvalidPushType"),
            (["apns-priority": "1"], "BadPriority"),
            (["apns-priority": "7"], "BadPriority"),
        ]
        for (replacing, reason) in cases {
            let response = try await harness.liveActivity(body, replacing: replacing)
            #expect(response.status == 400)
            #expect(response.reason == reason, "\(replacing)")
        }
        // A bad token is reported before a bad payload, as for every push.
        let both = try await harness.liveActivity(P.body(P.without(P.update, "event")), token: "abc")
        #expect(both.reason == "BadDeviceToken")
        // An alert push sent to the Live Activity topic is just an alert: no Live Activity rules for it.
        let alert = try await harness.apns(replacing: ["apns-topic": P.topic], body: SimulatorHarness.payload)
        #expect(alert.status == 200)
    }

    @Test("only liveactivity pushes get the Live Activity rules: other push types keep the plain JSON object check")
    func otherPushTypesAreNotParsed() async throws {
        let harness = try SimulatorHarness()
        // What a liveactivity push would be refused for (no timestamp, no event, a duplicate key) goes as an alert.
        let loose = Array(#"{"aps":{"alert":"hi","alert":"again"},"event":"pause"}"#.utf8)
        #expect(try await harness.apns(body: loose).status == 200)
        #expect(try await harness.apns(replacing: ["apns-push-type": nil], body: loose).status == 200)
        let refused = try await harness.liveActivity(loose)
        #expect(refused.reason == "PayloadEmpty")
        #expect(
            harness.simulator.received().last?.detail == "the payload must be a JSON object (without duplicate keys)")
        // Alert rejections carry no detail.
        #expect(try await harness.apns(body: Array("[]".utf8)).reason == "PayloadEmpty")
        #expect(harness.simulator.received().last?.detail == nil)
    }

    @Test("push-to-start and update tokens are hex of their own lengths", arguments: [8, 32, 40, 80, 100, 160])
    func tokenLengths(_ bytes: Int) async throws {
        let harness = try SimulatorHarness()
        let token = String(repeating: "e7", count: bytes)
        let response = try await harness.liveActivity(P.body(P.start), token: token)
        #expect(response.status == 200, "\(response.reason ?? "")")
        #expect(harness.simulator.received(token: token).count == 1)
        // An odd number of digits is no token, whatever the push type.
        #expect(try await harness.liveActivity(P.body(P.start), token: token + "e").reason == "BadDeviceToken")
    }

    @Test("--apns-topics a allows a.push-type.liveactivity, and Live Activity tokens belong to bundle a")
    func topicPolicyTakesTheLiveActivityTopicAsItsBundle() async throws {
        let harness = try SimulatorHarness(apnsTopics: ["app.herald.demo"])
        #expect(TopicPolicy(bundles: ["app.herald.demo"]).bundle(of: P.topic) == "app.herald.demo")
        #expect(try await harness.liveActivity(P.body(P.start), token: P.startToken).status == 200)
        // Another team's app, even with the right suffix: TopicDisallowed (checked before the payload).
        let other = try await harness.liveActivity(
            P.body(P.start), token: P.startToken,
            replacing: ["apns-topic": "com.other.app.push-type.liveactivity"])
        #expect(other.reason == "TopicDisallowed")
        // The start bound its token to the bundle, not to the Live Activity topic: an alert to the app is the same
        // app, and the owner the control API lists is the bundle.
        #expect(try await harness.apns(token: P.startToken).status == 200)
        let (status, owners) = try await harness.control("GET", "/sim/tokens")
        #expect(status == 200)
        #expect(owners[P.startToken]?["bundleId"] == .string("app.herald.demo"))
    }

    @Test("a Live Activity token bound to another app is DeviceTokenNotForTopic")
    func liveActivityTokenOfAnotherApp() async throws {
        let harness = try SimulatorHarness(apnsTopics: ["app.herald.demo", "app.herald.other"])
        #expect(
            try await harness.liveActivity(
                P.body(P.start), token: P.startToken,
                replacing: ["apns-topic": "app.herald.other.push-type.liveactivity"]
            )
            .status == 200)
        let wrong = try await harness.liveActivity(P.body(P.update), token: P.startToken)
        #expect(wrong.reason == "DeviceTokenNotForTopic")
    }

    @Test("a Live Activity push is recorded with its headers and exact bytes, in Swift and in GET /sim/received")
    func recorded() async throws {
        let harness = try SimulatorHarness()
        let body = P.body(P.start)
        let apnsID = "0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2e"
        let response = try await harness.liveActivity(
            body, token: P.startToken,
            replacing: [
                "apns-expiration": "1750028800", "apns-collapse-id": "activity-42", "apns-id": apnsID,
            ])
        #expect(response.status == 200)
        #expect(response.header("apns-id") == apnsID)

        let record = try #require(harness.simulator.received(token: P.startToken).first)
        #expect(record.service == .apns)
        #expect(record.token == P.startToken)
        #expect(record.status == 200)
        #expect(record.id == apnsID)
        #expect(record.apnsPushType == "liveactivity")
        #expect(record.apnsTopic == P.topic)
        #expect(record.apnsPriority == "10")
        #expect(record.apnsExpiration == "1750028800")
        #expect(record.apnsCollapseID == "activity-42")
        #expect(record.header("authorization") == "<redacted>")
        #expect(record.body == body)
        let aps = try #require(record.payload?["aps"])
        #expect(aps["event"] == .string("start"))
        #expect(aps["timestamp"] == .number(1_750_000_000))
        #expect(aps["attributes-type"] == .string("ProgressAttributes"))
        #expect(aps["content-state"]?["progress"] == .number(0.25))
        #expect(aps["input-push-token"] == .number(1))

        // The control API: headers by name, the payload byte for byte, no detail on a 200.
        let (status, json) = try await harness.control("GET", "/sim/received?token=\(P.startToken)")
        #expect(status == 200)
        let entry = try #require(json.arrayValue?.first)
        let headers = entry["headers"]
        #expect(headers?["apns-push-type"] == .string("liveactivity"))
        #expect(headers?["apns-topic"] == .string(P.topic))
        #expect(headers?["apns-priority"] == .string("10"))
        #expect(headers?["apns-expiration"] == .string("1750028800"))
        #expect(headers?["apns-collapse-id"] == .string("activity-42"))
        #expect(headers?["apns-id"] == .string(apnsID))
        #expect(headers?["authorization"] == .string("<redacted>"))
        #expect(entry["payload"] == (try JSONParser.parse(body)))
        #expect(entry["detail"] == nil)
        #expect(entry["status"] == .number(200))
    }

    @Test("a refused Live Activity push is recorded with its reason and the rule it broke")
    func refusedIsRecordedWithDetail() async throws {
        let harness = try SimulatorHarness()
        let body = P.body(P.without(P.start, "alert"))
        #expect(try await harness.liveActivity(body, token: P.startToken).status == 400)
        let (_, json) = try await harness.control("GET", "/sim/received?token=\(P.startToken)")
        let entry = try #require(json.arrayValue?.first)
        #expect(entry["status"] == .number(400))
        #expect(entry["reason"] == .string("PayloadEmpty"))
        #expect(entry["detail"] == .string("aps.alert is required on start"))
        #expect(entry["payload"]?["aps"]?["event"] == .string("start"))
        #expect(entry["headers"]?["apns-push-type"] == .string("liveactivity"))
    }
}
