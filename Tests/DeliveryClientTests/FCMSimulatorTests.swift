import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// FCMClient against the in-process simulator (FCM HTTP v1 and the OAuth2 token endpoint) over
/// TLS HTTP/2.
@Suite(.serialized) struct FCMSimulatorTests {
    @Test func successDeliversTheMessageWithTokenAndTTL() async throws {
        let harness = try DeliveryHarness()
        let message = DeliveryHarness.fcmMessage()
        #expect(await harness.fcm.send(message) == .sent)
        let record = try #require(harness.simulator.received(token: message.token).first)
        #expect(record.service == .fcm)
        #expect(record.status == 200)
        let body = try #require(record.payload)
        #expect(body["message"]?["token"]?.stringValue == message.token)
        #expect(body["message"]?["android"]?["ttl"]?.stringValue == "120s")
        #expect(body["message"]?["android"]?["priority"]?.stringValue == "HIGH")
        #expect(JSONWriter.string(body["message"]?["data"] ?? .null) == #"{"title":"Hi","n":"1"}"#)
        #expect(record.header("authorization") == "<redacted>")
        #expect(harness.simulator.statistics.token[200] == 1)
    }

    @Test func oneAccessTokenServesManySends() async throws {
        let harness = try DeliveryHarness()
        let results = await withTaskGroup(of: DeliveryResult.self) { group in
            for _ in 0..<100 {
                group.addTask { await harness.fcm.send(DeliveryHarness.fcmMessage()) }
            }
            return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 == .sent })
        #expect(harness.simulator.statistics.token[200] == 1)
        #expect(harness.fcm.accessTokens.tokensFetched == 1)
        #expect(harness.simulator.statistics.fcm[200] == 100)
    }

    static let faults: [(SimulatorFault, DeliveryResult)] = [
        (SimulatorFault(status: 404, reason: "UNREGISTERED"), .tokenInvalid(reason: "UNREGISTERED")),
        (SimulatorFault(status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 30),
         .retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(30))),
        (SimulatorFault(status: 503, reason: "UNAVAILABLE", retryAfter: 2),
         .retry(reason: "UNAVAILABLE", retryAfter: .seconds(2))),
        (SimulatorFault(status: 500, reason: "INTERNAL"), .retry(reason: "INTERNAL", retryAfter: nil)),
        (SimulatorFault(status: 400, reason: "INVALID_ARGUMENT"), .failed(reason: "INVALID_ARGUMENT")),
        (SimulatorFault(status: 403, reason: "SENDER_ID_MISMATCH"), .failed(reason: "SENDER_ID_MISMATCH")),
        (SimulatorFault(status: 401, reason: "THIRD_PARTY_AUTH_ERROR"), .failed(reason: "THIRD_PARTY_AUTH_ERROR")),
        (SimulatorFault(drop: true), .retry(reason: "connection_lost", retryAfter: nil)),
    ]

    @Test func eachFaultComesToItsResult() async throws {
        let harness = try DeliveryHarness()
        for (fault, expected) in Self.faults {
            let message = DeliveryHarness.fcmMessage()
            harness.simulator.setFault(fault, token: message.token)
            let result = await harness.fcm.send(message)
            #expect(result == expected, "\(fault)")
            #expect(!(result.reason ?? "").contains(message.token))
        }
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
    }

    @Test func expiredAccessTokenIsRenewedOn401() async throws {
        let harness = try DeliveryHarness()
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
        // FCM sees the access token as expired; the client still thinks it has 10 minutes left.
        harness.simulatorClock.advance(.seconds(61 * 60))
        harness.clientClock.advance(.seconds(50 * 60))
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
        #expect(harness.simulator.statistics.fcm[401] == 1)
        #expect(harness.simulator.statistics.token[200] == 2)
        #expect(harness.fcm.accessTokens.tokensFetched == 2)
    }

    @Test func accessTokenIsRenewedBeforeItExpires() async throws {
        let harness = try DeliveryHarness(sharedClock: true)
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
        harness.simulatorClock.advance(.seconds(56 * 60))
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
        #expect(harness.simulator.statistics.token[200] == 2)
        #expect(harness.simulator.statistics.fcm[401] == 0)
    }

    @Test func messagesWithoutTTLLeaveFCMsDefault() async throws {
        let harness = try DeliveryHarness()
        let message = DeliveryHarness.fcmMessage(ttlSeconds: nil)
        #expect(await harness.fcm.send(message) == .sent)
        let record = try #require(harness.simulator.received(token: message.token).first)
        #expect(record.payload?["message"]?["android"]?["ttl"] == nil)
    }
}
