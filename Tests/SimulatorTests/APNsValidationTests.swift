import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// One malformed APNs request per reason: the simulator answers with APNs' status and reason.
struct APNsCase: Sendable, CustomTestStringConvertible {
    var name: String
    var status: Int
    var reason: String
    var method = "POST"
    var path: String?
    var token = SimulatorHarness.deviceToken
    var replacing: [String: String?] = [:]
    var adding: [HTTP2Header] = []
    var body = SimulatorHarness.payload

    var testDescription: String { "\(name) -> \(status) \(reason)" }
}

@Suite("APNs request checks")
struct APNsValidationTests {
    static let cases: [APNsCase] = [
        APNsCase(
            name: "no authorization", status: 403, reason: "MissingProviderToken", replacing: ["authorization": nil]),
        APNsCase(
            name: "authorization not a JWT", status: 403, reason: "InvalidProviderToken",
            replacing: ["authorization": "bearer not.a.jwt"]),
        APNsCase(
            name: "authorization without bearer", status: 403, reason: "InvalidProviderToken",
            replacing: ["authorization": "token abc"]),
        APNsCase(name: "no topic", status: 400, reason: "MissingTopic", replacing: ["apns-topic": nil]),
        APNsCase(
            name: "unknown push type", status: 400, reason: "InvalidPushType", replacing: ["apns-push-type": "banner"]),
        APNsCase(
            name: "liveactivity to the app topic", status: 400, reason: "InvalidPushType",
            replacing: ["apns-push-type": "liveactivity"]),
        APNsCase(name: "priority 7", status: 400, reason: "BadPriority", replacing: ["apns-priority": "7"]),
        APNsCase(
            name: "background at priority 10", status: 400, reason: "BadPriority",
            replacing: ["apns-push-type": "background"]),
        APNsCase(
            name: "background without priority", status: 400, reason: "BadPriority",
            replacing: ["apns-push-type": "background", "apns-priority": nil]),
        APNsCase(
            name: "expiration not an integer", status: 400, reason: "BadExpirationDate",
            replacing: ["apns-expiration": "tomorrow"]),
        APNsCase(
            name: "collapse id of 65 bytes", status: 400, reason: "BadCollapseId",
            replacing: ["apns-collapse-id": String(repeating: "c", count: 65)]),
        APNsCase(
            name: "uppercase apns-id", status: 400, reason: "BadMessageId",
            replacing: ["apns-id": "0190A6E4-8F4C-4CC1-B3A1-2F3B9E0C1D2E"]),
        APNsCase(name: "apns-id not a UUID", status: 400, reason: "BadMessageId", replacing: ["apns-id": "42"]),
        APNsCase(
            name: "device token of an odd number of digits", status: 400, reason: "BadDeviceToken", token: "abcde"),
        APNsCase(
            name: "device token over 1024 bytes", status: 400, reason: "BadDeviceToken",
            token: String(repeating: "ab", count: 1025)),
        APNsCase(name: "empty push type", status: 400, reason: "InvalidPushType", replacing: ["apns-push-type": ""]),
        APNsCase(
            name: "device token not hex", status: 400, reason: "BadDeviceToken",
            token: String(repeating: "zz", count: 32)),
        APNsCase(name: "no device token", status: 400, reason: "MissingDeviceToken", token: ""),
        APNsCase(name: "empty payload", status: 400, reason: "PayloadEmpty", body: []),
        APNsCase(name: "payload an array", status: 400, reason: "PayloadEmpty", body: Array("[1,2]".utf8)),
        APNsCase(name: "payload malformed", status: 400, reason: "PayloadEmpty", body: Array(#"{"aps":}"#.utf8)),
        APNsCase(
            name: "payload of 4097 bytes", status: 413, reason: "PayloadTooLarge",
            body: SimulatorHarness.payload(bytes: 4097)),
        APNsCase(
            name: "duplicate apns-topic", status: 400, reason: "DuplicateHeaders",
            adding: [HTTP2Header("apns-topic", "other.topic")]),
        APNsCase(name: "GET", status: 405, reason: "MethodNotAllowed", method: "GET"),
        APNsCase(name: "unknown APNs path", status: 404, reason: "BadPath", path: "/3/devices/abc"),
        APNsCase(name: "unknown path", status: 404, reason: "BadPath", path: "/nothing/here"),
    ]

    @Test(arguments: cases)
    func rejected(_ test: APNsCase) async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns(
            token: test.token, method: test.method, path: test.path,
            replacing: test.replacing, adding: test.adding, body: test.body)
        #expect(response.status == test.status)
        #expect(response.reason == test.reason)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("apns-id").map(Identifiers.isLowercaseUUID) == true)
        // Every answered APNs request is recorded with its reason (unknown paths are not APNs requests).
        if test.path != "/nothing/here" {
            let record = try #require(harness.simulator.received().last)
            #expect(record.status == test.status)
            #expect(record.reason == test.reason)
        }
    }

    @Test("the 4097-byte payload really is 4097 bytes")
    func oversizedPayloadSize() throws {
        let body = try #require(Self.cases.first { $0.status == 413 }).body
        #expect(body.count == 4097)
        #expect(JSONShape.isObject(body))
    }

    @Test func successAnswersWithANewApnsID() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns()
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        let apnsID = try #require(response.header("apns-id"))
        #expect(Identifiers.isLowercaseUUID(apnsID))
        #expect(harness.simulator.received().first?.id == apnsID)
        // Production's answer has no apns-unique-id (the sandbox's has).
        // The id is new for every answer: sent never indexed, so it does not churn the client's HPACK table.
        #expect(response.headers.map(\.name) == ["apns-id"])
        #expect(response.headers.filter(\.neverIndexed).map(\.name) == ["apns-id"])
    }

    @Test func sandboxSuccessAlsoAnswersWithAUniqueID() async throws {
        let harness = try SimulatorHarness(apnsEnvironment: .sandbox)
        let first = try await harness.apns()
        let second = try await harness.apns()
        #expect(first.status == 200 && second.status == 200)
        let unique = try [first, second].map { try #require($0.header("apns-unique-id")) }
        #expect(unique.allSatisfy(Identifiers.isLowercaseUUID))
        #expect(unique[0] != unique[1])
        #expect(first.headers.filter(\.neverIndexed).map(\.name) == ["apns-id", "apns-unique-id"])
    }

    @Test func successEchoesTheClientsApnsID() async throws {
        let harness = try SimulatorHarness()
        let id = "0190a6e4-8f4c-4cc1-b3a1-2f3b9e0c1d2e"
        let response = try await harness.apns(replacing: ["apns-id": id])
        #expect(response.status == 200)
        #expect(response.header("apns-id") == id)
    }

    @Test func acceptedEdgeValues() async throws {
        let harness = try SimulatorHarness()
        let maxPayload = SimulatorHarness.payload(bytes: 4096)
        #expect(maxPayload.count == 4096)
        let accepted: [(replacing: [String: String?], body: [UInt8])] = [
            (
                ["apns-collapse-id": String(repeating: "c", count: 64), "apns-expiration": "0"],
                SimulatorHarness.payload
            ),
            (["apns-push-type": "background", "apns-priority": "5"], Array(#"{"aps":{"content-available":1}}"#.utf8)),
            (
                [
                    "apns-push-type": "liveactivity", "apns-topic": "app.herald.demo.push-type.liveactivity",
                    "apns-priority": "5",
                ], LiveActivityPayloads.body(LiveActivityPayloads.update)
            ),
            (["apns-priority": "1"], maxPayload),
            (
                ["apns-push-type": "voip", "apns-topic": "app.herald.demo.voip"],
                SimulatorHarness.payload(bytes: 5120)
            ),
        ]
        for (replacing, body) in accepted {
            let response = try await harness.apns(replacing: replacing, body: body)
            #expect(response.status == 200, "\(replacing): \(response.reason ?? "")")
        }
        // Upper-case hex tokens are tokens too.
        #expect(try await harness.apns(token: SimulatorHarness.deviceToken.uppercased()).status == 200)
    }

    @Test func liveActivityAtPriorityOneIsRefused() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns(
            replacing: [
                "apns-push-type": "liveactivity", "apns-topic": "app.herald.demo.push-type.liveactivity",
                "apns-priority": "1",
            ], body: LiveActivityPayloads.body(LiveActivityPayloads.update))
        #expect(response.status == 400)
        #expect(response.reason == "BadPriority")
    }

    // MARK: What Apple documents as optional (each a relaxation of a stricter check, or a guard against one)

    @Test("only authorization and apns-topic are required: the rest default as Apple documents")
    func onlyTheRequiredHeaders() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.apns(replacing: ["apns-push-type": nil, "apns-priority": nil])
        #expect(response.status == 200, "\(response.reason ?? "")")
        // No apns-id sent: APNs makes one and answers with it.
        let apnsID = try #require(response.header("apns-id"))
        #expect(Identifiers.isLowercaseUUID(apnsID))
        let record = try #require(harness.simulator.received().last)
        #expect(record.id == apnsID)
        #expect(record.header("apns-push-type") == nil)
        #expect(record.header("apns-expiration") == nil)
        #expect(record.header("apns-collapse-id") == nil)
    }

    @Test("without apns-push-type the push is an alert: every priority goes, background rules do not apply")
    func missingPushTypeIsAnAlert() async throws {
        let harness = try SimulatorHarness()
        for priority in ["10", "5", "1"] {
            let response = try await harness.apns(
                replacing: ["apns-push-type": nil, "apns-priority": priority],
                body: Array(#"{"aps":{"content-available":1}}"#.utf8))
            #expect(response.status == 200, "priority \(priority): \(response.reason ?? "")")
        }
        #expect(APNsRequestValidator.checkPriority(nil, pushType: nil) == nil)
        #expect(APNsRequestValidator.checkPriority("7", pushType: nil) == .badPriority)
    }

    @Test(
        "device tokens of any whole number of bytes are tokens (Apple: their length varies)",
        arguments: [1, 8, 32, 33, 100, 1024])
    func variableLengthDeviceTokens(_ bytes: Int) async throws {
        let harness = try SimulatorHarness()
        let token = String(repeating: "a1", count: bytes)
        let response = try await harness.apns(token: token)
        #expect(response.status == 200, "\(response.reason ?? "")")
        #expect(harness.simulator.received(token: token).count == 1)
    }

    @Test("the optional headers are checked when present")
    func optionalHeadersAreStillChecked() async throws {
        let harness = try SimulatorHarness()
        let cases: [([String: String?], String)] = [
            (["apns-expiration": "-1"], "BadExpirationDate"), (["apns-priority": "high"], "BadPriority"),
            (["apns-id": "not-a-uuid"], "BadMessageId"),
            (["apns-collapse-id": String(repeating: "é", count: 33)], "BadCollapseId"),
        ]
        for (replacing, reason) in cases {
            let response = try await harness.apns(replacing: replacing)
            #expect(response.status == 400)
            #expect(response.reason == reason, "\(replacing)")
        }
    }
}
