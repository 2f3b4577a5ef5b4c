import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// `/sim/received`, `/sim/stats` and `/sim/faults` over HTTP/2, as scripts and other tests use them.
@Suite("Control API")
struct ControlAPITests {
    static let otherToken = String(repeating: "cd", count: 32)

    @Test func receivedListsAnsweredRequestsInOrderWithoutCredentials() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.apns(replacing: ["apns-collapse-id": "first"]).status == 200)
        #expect(try await harness.apns(token: Self.otherToken, replacing: ["apns-topic": nil]).status == 400)
        let (status, json) = try await harness.control("GET", "/sim/received")
        #expect(status == 200)
        let records = try #require(json.arrayValue)
        #expect(records.count == 2)
        let first = records[0]
        #expect(first["service"] == .string("apns"))
        #expect(first["token"] == .string(SimulatorHarness.deviceToken))
        #expect(first["status"] == .number(200))
        #expect(first["reason"] == nil)
        #expect(first["headers"]?["authorization"] == .string("<redacted>"))
        #expect(first["headers"]?["apns-collapse-id"] == .string("first"))
        #expect(first["payload"]?["aps"]?["alert"]?["title"] == .string("Hello"))
        let receivedAt = try #require(first["receivedAt"]?.stringValue)
        #expect(ISO8601.parse(receivedAt) != nil)
        #expect(records[1]["status"] == .number(400))
        #expect(records[1]["reason"] == .string("MissingTopic"))
        // Nothing of the provider token leaks into the log.
        let text = String(decoding: JSONWriter.bytes(json), as: UTF8.self)
        #expect(!text.contains(harness.jwt))
    }

    @Test func receivedFiltersByToken() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.apns()
        _ = try await harness.apns(token: Self.otherToken)
        _ = try await harness.apns()
        let (_, json) = try await harness.control("GET", "/sim/received?token=\(Self.otherToken)")
        #expect(json.arrayValue?.count == 1)
        #expect(json.arrayValue?.first?["token"] == .string(Self.otherToken))
        #expect(harness.simulator.received(token: SimulatorHarness.deviceToken).count == 2)
        let (badStatus, badJSON) = try await harness.control("GET", "/sim/received?colour=red")
        #expect(badStatus == 400)
        #expect(badJSON["error"]?.stringValue?.contains("colour") == true)
    }

    @Test func unparseablePayloadIsRecordedAsRawText() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.apns(body: Array("{oops".utf8))
        let (_, json) = try await harness.control("GET", "/sim/received")
        let record = try #require(json.arrayValue?.first)
        #expect(record["payload"] == .null)
        #expect(record["rawPayload"] == .string("{oops"))
    }

    @Test func deleteReceivedClearsTheRecordButNotTheStatistics() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.apns()
        let (status, json) = try await harness.control("DELETE", "/sim/received")
        #expect(status == 200)
        #expect(json["cleared"] == .number(1))
        #expect(try await harness.control("GET", "/sim/received").json == .array([]))
        #expect(harness.simulator.statistics.apns[200] == 1)
    }

    @Test func statsCountByServiceAndStatus() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.apns()
        _ = try await harness.apns()
        _ = try await harness.apns(replacing: ["apns-priority": "3"])
        let token = try await harness.accessToken()
        _ = try await harness.fcm(message: #"{"message":{"token":"t"}}"#, accessToken: token)
        let (status, json) = try await harness.control("GET", "/sim/stats")
        #expect(status == 200)
        #expect(json["apns"] == .object([("200", .number(2)), ("400", .number(1))]))
        #expect(json["fcm"] == .object([("200", .number(1))]))
        #expect(json["token"] == .object([("200", .number(1))]))
        let (_, reset) = try await harness.control("DELETE", "/sim/stats")
        #expect(reset["apns"] == .object([]))
    }

    @Test func faultsAreSetListedAndCleared() async throws {
        let harness = try SimulatorHarness()
        let (status, json) = try await harness.control(
            "PUT", "/sim/faults/\(SimulatorHarness.deviceToken)",
            body: #"{"status":410,"reason":"Unregistered","times":null,"retryAfter":1,"delayMs":0,"drop":false}"#)
        #expect(status == 200)
        #expect(json["fault"]?["status"] == .number(410))
        let (_, listed) = try await harness.control("GET", "/sim/faults")
        #expect(listed[SimulatorHarness.deviceToken]?["reason"] == .string("Unregistered"))
        #expect(try await harness.apns().status == 410)
        #expect(try await harness.apns().status == 410)
        let (_, cleared) = try await harness.control("DELETE", "/sim/faults")
        #expect(cleared["cleared"] == .number(1))
        #expect(try await harness.apns().status == 200)
    }

    @Test func oneFaultCanBeCleared() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.control("PUT", "/sim/faults/\(SimulatorHarness.deviceToken)", body: #"{"status":500}"#)
        #expect(
            try await harness.control("DELETE", "/sim/faults/\(SimulatorHarness.deviceToken)").json["cleared"]
                == .number(1))
        #expect(try await harness.apns().status == 200)
    }

    @Test(arguments: [
        ("not json", "not JSON"),
        ("[1]", "JSON object"),
        (#"{"status":"410"}"#, "status"),
        (#"{"status":99}"#, "status"),
        (#"{"status":410,"times":0}"#, "times"),
        (#"{"status":410,"times":1.5}"#, "times"),
        (#"{"delayMs":-1}"#, "delayMs"),
        (#"{"drop":"yes"}"#, "drop"),
        (#"{"drop":true,"goaway":true}"#, "drop and goaway"),
        (#"{"statsu":410}"#, "unknown member"),
        ("{}", "at least one"),
    ])
    func badFaultsAreRefusedWithAReason(body: String, mentions: String) async throws {
        let harness = try SimulatorHarness()
        let (status, json) = try await harness.control("PUT", "/sim/faults/abc", body: body)
        #expect(status == 400)
        let message = try #require(json["error"]?.stringValue)
        #expect(message.contains(mentions), "\(message)")
        #expect(harness.simulator.statistics.apns.total == 0)
    }

    @Test func unknownEndpointsAndMethods() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.control("GET", "/sim/nothing").status == 404)
        #expect(try await harness.control("POST", "/sim/received").status == 405)
        #expect(try await harness.control("GET", "/sim/faults/abc").status == 405)
    }
}
