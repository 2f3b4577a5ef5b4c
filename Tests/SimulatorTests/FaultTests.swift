import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// Faults per device token: status and reason, times, delay, drop, GOAWAY; APNs and FCM shapes.
@Suite("Faults")
struct FaultTests {
    static let token = SimulatorHarness.deviceToken

    @Test func unregisteredForTheNextRequestOnly() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 410, times: 1), token: Self.token)
        let first = try await harness.apns()
        #expect(first.status == 410)
        #expect(first.reason == "Unregistered")
        // The simulator's clock (the harness's, which only moves by hand), not the wall clock: building the
        // harness can take over a second on a machine busy with the whole suite.
        let now = Int64((harness.clock.now.timeIntervalSince1970 * 1000).rounded(.down))
        let timestamp = try #require(first.json?["timestamp"]?.numberValue)
        #expect(Int64(timestamp) == now)
        #expect(try await harness.apns().status == 200)
        #expect(harness.simulator.received().map(\.status) == [410, 200])
        #expect(harness.simulator.received().first?.reason == "Unregistered")
    }

    @Test func timesCountsDown() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 503, reason: "Shutdown", times: 2), token: Self.token)
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await harness.apns().status) }
        #expect(statuses == [503, 503, 200])
        #expect(harness.simulator.statistics.apns[503] == 2)
    }

    @Test func retryAfterBecomesAHeader() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 429, retryAfter: 7), token: Self.token)
        let response = try await harness.apns()
        #expect(response.status == 429)
        #expect(response.reason == "TooManyRequests")
        #expect(response.header("retry-after") == "7")
    }

    @Test func faultsApplyOnlyToValidRequests() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 410, times: 1), token: Self.token)
        #expect(try await harness.apns(replacing: ["apns-topic": nil]).reason == "MissingTopic")
        #expect(try await harness.apns().status == 410)
    }

    @Test func delayWithoutStatusDelaysTheNormalAnswerWithoutBlockingOthers() async throws {
        let harness = try SimulatorHarness()
        let other = ControlAPITests.otherToken
        // Connect first, so the timings below are the simulator's, not the TLS handshake's.
        #expect(try await harness.apns(token: other).status == 200)
        // Long enough that the other request is answered inside it even on a machine busy with the whole
        // suite (800 ms once was not).
        harness.simulator.setFault(SimulatorFault(delayMs: 5000), token: Self.token)
        let start = ContinuousClock.now
        async let slow = harness.apns()
        // The slow request arrived (its answer waits out the delay) before the other goes out. Held, or already
        // answered: a suite that keeps the cooperative threads busy may resume this task after the delay ended.
        #expect(
            await eventually {
                harness.simulator.answersHeld == 1 || harness.simulator.received().contains { $0.token == Self.token }
            })
        // Another token on the same connection is answered while the slow one waits. A suite that keeps
        // the cooperative threads busy may resume this task seconds late, so what is checked depends on
        // when the fast request really went out (the simulator's own timing is what is under test).
        let fastSentAfter = ContinuousClock.now - start
        #expect(try await harness.apns(token: other).status == 200)
        let fastAnsweredAfter = ContinuousClock.now - start
        if fastAnsweredAfter < .milliseconds(4500) {
            #expect(harness.simulator.received().count == 2, "the delayed answer is not recorded before it is sent")
        }
        let slowResponse = try await slow
        #expect(slowResponse.status == 200)
        #expect(ContinuousClock.now - start >= .milliseconds(5000))
        // Recorded when answered: the fast one first (when it went out well inside the delay).
        if fastSentAfter < .milliseconds(4000) {
            #expect(harness.simulator.received().map(\.token) == [other, other, Self.token])
        }
    }

    @Test func delayedError() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 500, delayMs: 300), token: Self.token)
        let start = ContinuousClock.now
        let response = try await harness.apns()
        #expect(response.status == 500)
        #expect(response.reason == "InternalServerError")
        #expect(ContinuousClock.now - start >= .milliseconds(300))
    }

    @Test func dropClosesTheConnectionWithoutAnAnswer() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(times: 1, drop: true), token: Self.token)
        await #expect(throws: HTTP2Error.self) { try await harness.apns() }
        // The client reconnects; the fault is used up.
        #expect(try await harness.apns().status == 200)
        #expect(harness.simulator.statistics.apns.dropped == 1)
        #expect(harness.simulator.received().count == 1)
    }

    @Test func goAwayLeavesTheRequestUnprocessedSoTheClientResendsIt() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(times: 1, goAway: true), token: Self.token)
        // The client resends a stream the GOAWAY marked unprocessed on a new connection.
        let response = try await harness.apns()
        #expect(response.status == 200)
        #expect(harness.simulator.statistics.apns.goAways == 1)
        #expect(harness.simulator.statistics.apns[200] == 1)
        #expect(harness.simulator.received().count == 1)
        let (_, stats) = try await harness.control("GET", "/sim/stats")
        #expect(stats["apns"]?["goaway"] == .number(1))
    }

    @Test(arguments: [
        (404, "UNREGISTERED", "NOT_FOUND"), (400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
        (401, "THIRD_PARTY_AUTH_ERROR", "UNAUTHENTICATED"), (403, "SENDER_ID_MISMATCH", "PERMISSION_DENIED"),
        (429, "QUOTA_EXCEEDED", "RESOURCE_EXHAUSTED"), (500, "INTERNAL", "INTERNAL"),
        (503, "UNAVAILABLE", "UNAVAILABLE"),
    ])
    func fcmFaultsAnswerTheMatchingErrorCode(status: Int, errorCode: String, statusName: String) async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(
            SimulatorFault(status: status, retryAfter: status == 429 ? 60 : nil), token: "device-9")
        let token = try await harness.accessToken()
        let response = try await harness.fcm(message: #"{"message":{"token":"device-9"}}"#, accessToken: token)
        #expect(response.status == status)
        #expect(response.reason == errorCode)
        #expect(response.json?["error"]?["status"] == .string(statusName))
        #expect(response.json?["error"]?["code"] == .number(Double(status)))
        if status == 429 { #expect(response.header("retry-after") == "60") }
        #expect(harness.simulator.received().last?.reason == errorCode)
    }

    @Test func fcmFaultReasonOverridesTheErrorCode() async throws {
        let harness = try SimulatorHarness()
        harness.simulator.setFault(SimulatorFault(status: 400, reason: "UNREGISTERED"), token: "/topics/news")
        let token = try await harness.accessToken()
        let response = try await harness.fcm(message: #"{"message":{"topic":"news"}}"#, accessToken: token)
        #expect(response.status == 400)
        #expect(response.reason == "UNREGISTERED")
    }

    @Test func topicFaultsOverTheControlAPIArePercentEncoded() async throws {
        let harness = try SimulatorHarness()
        let (status, json) = try await harness.control("PUT", "/sim/faults/%2Ftopics%2Fnews", body: #"{"status":503}"#)
        #expect(status == 200)
        #expect(json["token"] == .string("/topics/news"))
        let token = try await harness.accessToken()
        #expect(try await harness.fcm(message: #"{"message":{"topic":"news"}}"#, accessToken: token).status == 503)
        let (_, received) = try await harness.control("GET", "/sim/received?token=%2Ftopics%2Fnews")
        #expect(received.arrayValue?.count == 1)
    }

    @Test func faultsOverTheControlAPIUseTheSameTable() async throws {
        let harness = try SimulatorHarness()
        _ = try await harness.control("PUT", "/sim/faults/device-7", body: #"{"status":404,"times":1}"#)
        let token = try await harness.accessToken()
        let message = #"{"message":{"token":"device-7"}}"#
        #expect(try await harness.fcm(message: message, accessToken: token).reason == "UNREGISTERED")
        #expect(try await harness.fcm(message: message, accessToken: token).status == 200)
    }
}
