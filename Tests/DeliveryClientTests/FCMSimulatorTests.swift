import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

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
        // FCM asks for at least a minute on quota errors, whatever Retry-After says below that.
        (
            SimulatorFault(status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 30),
            .retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))
        ),
        (
            SimulatorFault(status: 429, reason: "QUOTA_EXCEEDED"),
            .retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))
        ),
        (
            SimulatorFault(status: 429, reason: "QUOTA_EXCEEDED", retryAfter: 90),
            .retry(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(90))
        ),
        (
            SimulatorFault(status: 503, reason: "UNAVAILABLE", retryAfter: 2),
            .retry(reason: "UNAVAILABLE", retryAfter: .seconds(2))
        ),
        (SimulatorFault(status: 500, reason: "INTERNAL"), .retry(reason: "INTERNAL", retryAfter: nil)),
        // The simulator answers an INVALID_ARGUMENT fault as FCM answers a bad registration token: suspect (the
        // worker's verdict tracker decides), never dead on its own word.
        (SimulatorFault(status: 400, reason: "INVALID_ARGUMENT"), .tokenSuspect(reason: "INVALID_ARGUMENT")),
        // Another Firebase project's credentials: Herald's setup, never the token's fault.
        (SimulatorFault(status: 403, reason: "SENDER_ID_MISMATCH"), .setupFault(reason: "SENDER_ID_MISMATCH")),
        (SimulatorFault(status: 401, reason: "THIRD_PARTY_AUTH_ERROR"), .setupFault(reason: "THIRD_PARTY_AUTH_ERROR")),
        (SimulatorFault(status: 403, reason: "PERMISSION_DENIED"), .setupFault(reason: "PERMISSION_DENIED")),
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

    @Test func an401ThatRenewalDoesNotFixIsASetupFault() async throws {
        let harness = try DeliveryHarness()
        let message = DeliveryHarness.fcmMessage()
        harness.simulator.setFault(SimulatorFault(status: 401, reason: "UNAUTHENTICATED"), token: message.token)
        #expect(await harness.fcm.send(message) == .setupFault(reason: "UNAUTHENTICATED"))
        // One renewal and one resend.
        #expect(harness.simulator.statistics.token[200] == 2)
        #expect(harness.simulator.received(token: message.token).count == 2)
    }

    @Test func anotherProjectsServiceAccountIsPermissionDeniedAsASetupFault() async throws {
        let harness = try DeliveryHarness()
        let client = try harness.fcmClient(projectID: "someone-elses-project")
        defer { client.shutdown() }
        // The simulator answers as Google's front end does: 403 PERMISSION_DENIED without an FcmError detail.
        #expect(await client.send(DeliveryHarness.fcmMessage()) == .setupFault(reason: "PERMISSION_DENIED"))
        #expect(harness.simulator.statistics.fcm[403] == 1)
    }

    /// A token of another project than the credentials' is FCM's 403 SENDER_ID_MISMATCH. A sender holding the wrong
    /// project's credentials sees it for every token at once, so it is a setup fault, not a dead token.
    @Test func anotherProjectsTokenIsSenderIDMismatchAsASetupFault() async throws {
        let harness = try DeliveryHarness(otherFCMAccount: true, fcmTokenProject: TestCredentials.shared.fcmProjectID)
        let client = try harness.fcmClient(other: true)
        defer { client.shutdown() }
        let message = DeliveryHarness.fcmMessage()
        let result = await client.send(message)
        #expect(result == .setupFault(reason: "SENDER_ID_MISMATCH"), "\(result)")
        let record = try #require(harness.simulator.received(token: message.token).first)
        #expect(record.status == 403)
        #expect(record.reason == "SENDER_ID_MISMATCH")
        // The same credentials reach a token of their own project, and Herald's own client its project's tokens.
        let own = DeliveryHarness.fcmMessage()
        harness.simulator.bindToken(own.token, fcmProject: TestCredentials.shared.fcmOtherProjectID)
        #expect(await client.send(own) == .sent)
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
    }

    @Test func anInvalidArgumentAboutTheMessageFailsItWithoutTouchingTheToken() async throws {
        let harness = try DeliveryHarness()
        let message = FCMMessage(
            token: "fcm-" + UUID().uuidString,
            message: Array(#"{"android":{"priority":"HIGH"},"data":{"from":"x"}}"#.utf8))
        #expect(await harness.fcm.send(message) == .failed(reason: "INVALID_ARGUMENT"))
        #expect(harness.simulator.statistics.fcm[400] == 1)
    }

    @Test func aRefusedTokenExchangeIsASetupFaultAndBacksOff() async throws {
        let harness = try DeliveryHarness()
        // The client's clock runs two hours ahead: its assertions are refused (invalid_grant).
        harness.clientClock.advance(.seconds(2 * 3600))
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .setupFault(reason: "oauth_invalid_grant"))
        #expect(harness.simulator.statistics.token[400] == 1)
        // Within the backoff (at most 1 s after one failure) sends fail at once without another exchange.
        for _ in 0..<10 {
            #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .setupFault(reason: "oauth_invalid_grant"))
        }
        #expect(harness.simulator.statistics.token.total == 1)
        #expect(harness.simulator.statistics.fcm.total == 0)
        #expect(harness.fcm.accessTokens.consecutiveFailures == 1)
        // Past the backoff, with the clocks agreeing again, the next send exchanges and goes through.
        harness.clientClock.advance(.seconds(1))
        harness.simulatorClock.set(harness.clientClock.now)
        #expect(await harness.fcm.send(DeliveryHarness.fcmMessage()) == .sent)
        #expect(harness.simulator.statistics.token[200] == 1)
        #expect(harness.fcm.accessTokens.consecutiveFailures == 0)
    }

    @Test func anUnreachableTokenEndpointIsARetry() async throws {
        let harness = try DeliveryHarness()
        let client = try harness.fcmClient(tokenURI: "https://127.0.0.1:\(TestEnvironment.freePort())/token")
        defer { client.shutdown() }
        let unreachable = DeliveryResult.retry(reason: "oauth_connect_failed", retryAfter: nil)
        #expect(await client.send(DeliveryHarness.fcmMessage()) == unreachable)
        // Backing off: the next send fails the same way without another exchange.
        #expect(await client.send(DeliveryHarness.fcmMessage()) == unreachable)
        #expect(client.accessTokens.exchangesStarted == 1)
        #expect(harness.simulator.statistics.fcm.total == 0)
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
