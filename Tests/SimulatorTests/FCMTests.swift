import Foundation
import HTTP2
import HeraldCore
import Testing

@testable import Simulator

/// FCM HTTP v1 `messages:send`: authentication, project, and the message checks.
@Suite("FCM messages:send")
struct FCMTests {
    @Test func validMessageIsAccepted() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let message =
            #"{"message":{"token":"device-1","data":{"title":"Hi","n":"1"},"#
            + #""android":{"priority":"HIGH","ttl":"3.5s","collapse_key":"k"}}}"#
        let response = try await harness.fcm(message: message, accessToken: token)
        #expect(response.status == 200)
        let name = try #require(response.json?["name"]?.stringValue)
        #expect(name.hasPrefix("projects/herald-sim/messages/"))
        let record = try #require(harness.simulator.received().last)
        #expect(record.service == .fcm)
        #expect(record.token == "device-1")
        #expect(record.id == name)
        #expect(record.header("authorization") == "<redacted>")
        #expect(record.payload?["message"]?["data"]?["title"] == .string("Hi"))
    }

    @Test func topicsAreTargetsToo() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        #expect(try await harness.fcm(message: #"{"message":{"topic":"news"}}"#, accessToken: token).status == 200)
        #expect(harness.simulator.received().last?.token == "/topics/news")
    }

    @Test func validateOnlyAnswersAFakeName() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let response = try await harness.fcm(
            message: #"{"validate_only":true,"message":{"token":"t"}}"#, accessToken: token)
        #expect(response.json?["name"] == .string("projects/herald-sim/messages/fake_message_id"))
    }

    @Test func missingOrUnknownAccessTokenIsUnauthenticated() async throws {
        let harness = try SimulatorHarness()
        for accessToken in [nil, "ya29.not-issued-here"] {
            let response = try await harness.fcm(message: #"{"message":{"token":"t"}}"#, accessToken: accessToken)
            #expect(response.status == 401)
            #expect(response.json?["error"]?["status"] == .string("UNAUTHENTICATED"))
            #expect(response.json?["error"]?["code"] == .number(401))
        }
    }

    @Test func anotherProjectIsPermissionDenied() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let response = try await harness.fcm(
            message: #"{"message":{"token":"t"}}"#, project: "someone-else",
            accessToken: token)
        #expect(response.status == 403)
        #expect(response.json?["error"]?["status"] == .string("PERMISSION_DENIED"))
    }

    static let invalidMessages: [String] = [
        #"not json"#,
        #"{"msg":{"token":"t"}}"#,
        #"{"message":{}}"#,
        #"{"message":{"token":"t","topic":"news"}}"#,
        #"{"message":{"token":""}}"#,
        #"{"message":{"token":7}}"#,
        #"{"message":{"topic":"bad topic!"}}"#,
        #"{"message":{"token":"t","data":{"n":1}}}"#,
        #"{"message":{"token":"t","data":["a"]}}"#,
        #"{"message":{"token":"t","data":{"from":"x"}}}"#,
        #"{"message":{"token":"t","data":{"message_type":"x"}}}"#,
        #"{"message":{"token":"t","data":{"google.x":"x"}}}"#,
        #"{"message":{"token":"t","data":{"gcm_key":"x"}}}"#,
        #"{"message":{"token":"t","android":{"priority":"URGENT"}}}"#,
        #"{"message":{"token":"t","android":{"priority":"high"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"3.5"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"1.1234567890s"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":"2419201s"}}}"#,
        #"{"message":{"token":"t","android":{"ttl":86400}}}"#,
        #"{"message":{"token":"t","colour":"red"}}"#,
        #"{"message":{"token":"t"},"extra":1}"#,
        #"{"message":{"token":"t","data":{"big":""# + String(repeating: "x", count: 4094) + #""}}}"#,
    ]

    @Test(arguments: invalidMessages)
    func invalidMessageIsInvalidArgument(_ message: String) async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let response = try await harness.fcm(message: message, accessToken: token)
        #expect(response.status == 400)
        let error = try #require(response.json?["error"])
        #expect(error["code"] == .number(400))
        #expect(error["status"] == .string("INVALID_ARGUMENT"))
        #expect(error["message"]?.stringValue?.isEmpty == false)
        let detail = try #require(error["details"]?.arrayValue?.first)
        #expect(detail["@type"] == .string("type.googleapis.com/google.firebase.fcm.v1.FcmError"))
        #expect(detail["errorCode"] == .string("INVALID_ARGUMENT"))
        #expect(harness.simulator.received().last?.status == 400)
    }

    @Test func limitsThatAreJustAllowed() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let bigData = #"{"message":{"token":"t","data":{"big":""# + String(repeating: "x", count: 4093) + #""}}}"#
        #expect(try await harness.fcm(message: bigData, accessToken: token).status == 200)
        let ttl = #"{"message":{"token":"t","android":{"ttl":"2419200.000000000s","priority":"NORMAL"}}}"#
        #expect(try await harness.fcm(message: ttl, accessToken: token).status == 200)
    }

    @Test("reserved data keys are the lower-case words Google documents; enum numbers are priorities too")
    func documentedReadingsAreAccepted() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let keys = #"{"message":{"token":"t","data":{"From":"a","Message_Type":"b","Google.x":"c","GCMx":"d"}}}"#
        #expect(try await harness.fcm(message: keys, accessToken: token).status == 200)
        for priority in ["0", "1"] {
            let message = #"{"message":{"token":"t","android":{"priority":"# + priority + "}}}"
            #expect(try await harness.fcm(message: message, accessToken: token).status == 200, "\(priority)")
        }
        let two = #"{"message":{"token":"t","android":{"priority":2}}}"#
        #expect(try await harness.fcm(message: two, accessToken: token).status == 400)
    }

    @Test func durations() {
        #expect(FCMRequestValidator.durationSeconds("0s") == 0)
        #expect(FCMRequestValidator.durationSeconds("3.5s") == 3.5)
        #expect(FCMRequestValidator.durationSeconds("1.123456789s") == 1.123456789)
        #expect(FCMRequestValidator.durationSeconds("1.s") == nil)
        #expect(FCMRequestValidator.durationSeconds(".5s") == nil)
        #expect(FCMRequestValidator.durationSeconds("-1s") == nil)
        #expect(FCMRequestValidator.durationSeconds("1e3s") == nil)
    }
}
