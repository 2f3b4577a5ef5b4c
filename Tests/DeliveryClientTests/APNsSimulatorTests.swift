import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// APNsClient against the in-process simulator over TLS HTTP/2: what APNs would receive, and
/// what each of its answers comes to.
@Suite(.serialized) struct APNsSimulatorTests {
    @Test func successSendsEveryHeaderAndAValidProviderToken() async throws {
        let harness = try DeliveryHarness()
        let notification = DeliveryHarness.notification()
        #expect(await harness.apns.send(notification) == .sent)
        let record = try #require(harness.simulator.received(token: notification.deviceToken).first)
        #expect(record.service == .apns)
        #expect(record.status == 200)
        #expect(record.header("apns-push-type") == "alert")
        #expect(record.header("apns-topic") == harness.credentials.apnsTopic)
        #expect(record.header("apns-priority") == "10")
        #expect(record.header("apns-expiration") == "0")
        #expect(record.header("apns-id") == notification.id)
        #expect(record.body == notification.payload)
        // The simulator accepted the provider token (it checks it as APNs does) and redacts it in its log.
        #expect(record.header("authorization") == "<redacted>")
        #expect(harness.apns.providerTokensIssued == 1)
    }

    @Test func liveActivityAndSandboxGoThroughToo() async throws {
        let harness = try DeliveryHarness()
        let notification = DeliveryHarness.notification(
            environment: .sandbox, pushType: "liveactivity",
            payload: #"{"aps":{"timestamp":1750000000,"event":"update","content-state":{"score":1}}}"#)
        #expect(await harness.apns.send(notification) == .sent)
        let record = try #require(harness.simulator.received(token: notification.deviceToken).first)
        #expect(record.header("apns-topic") == harness.credentials.apnsTopic + ".push-type.liveactivity")
        #expect(record.header("apns-push-type") == "liveactivity")
    }

    @Test func manyConcurrentSendsShareOneProviderToken() async throws {
        let harness = try DeliveryHarness()
        let results = await withTaskGroup(of: DeliveryResult.self) { group in
            for _ in 0..<200 {
                group.addTask { await harness.apns.send(DeliveryHarness.notification()) }
            }
            return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { $0 == .sent })
        #expect(harness.apns.providerTokensIssued == 1)
        #expect(harness.simulator.statistics.apns[200] == 200)
    }

    static let faults: [(SimulatorFault, DeliveryResult)] = [
        (SimulatorFault(status: 410, reason: "Unregistered"), .tokenInvalid(reason: "Unregistered")),
        (SimulatorFault(status: 410, reason: "ExpiredToken"), .tokenInvalid(reason: "ExpiredToken")),
        (SimulatorFault(status: 400, reason: "BadDeviceToken"), .tokenInvalid(reason: "BadDeviceToken")),
        (SimulatorFault(status: 429, reason: "TooManyRequests", retryAfter: 5),
         .retry(reason: "TooManyRequests", retryAfter: .seconds(5))),
        (SimulatorFault(status: 500, reason: "InternalServerError"),
         .retry(reason: "InternalServerError", retryAfter: nil)),
        (SimulatorFault(status: 503, reason: "ServiceUnavailable"),
         .retry(reason: "ServiceUnavailable", retryAfter: nil)),
        (SimulatorFault(status: 503, reason: "Shutdown"), .retry(reason: "Shutdown", retryAfter: nil)),
        (SimulatorFault(status: 400, reason: "BadTopic"), .failed(reason: "BadTopic")),
        (SimulatorFault(status: 403, reason: "InvalidProviderToken"), .failed(reason: "InvalidProviderToken")),
        (SimulatorFault(status: 413, reason: "PayloadTooLarge"), .failed(reason: "PayloadTooLarge")),
        (SimulatorFault(drop: true), .retry(reason: "connection_lost", retryAfter: nil)),
    ]

    @Test func eachFaultComesToItsResult() async throws {
        let harness = try DeliveryHarness()
        for (fault, expected) in Self.faults {
            let notification = DeliveryHarness.notification()
            harness.simulator.setFault(fault, token: notification.deviceToken)
            let result = await harness.apns.send(notification)
            #expect(result == expected, "\(fault)")
            #expect(!(result.reason ?? "").contains(notification.deviceToken))
        }
        // The connection survives all of that: a clean send still goes through.
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
    }

    @Test func oversizedPayloadIsRefusedByAPNsRulesNotByAFault() async throws {
        let harness = try DeliveryHarness()
        let big = #"{"aps":{},"x":""# + String(repeating: "x", count: 4100) + #""}"#
        #expect(await harness.apns.send(DeliveryHarness.notification(payload: big))
                    == .failed(reason: "PayloadTooLarge"))
    }

    @Test func expiredProviderTokenIsRenewedAndTheSendSucceeds() async throws {
        let harness = try DeliveryHarness()
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        // APNs sees the token as 65 minutes old; the client as 25 (not yet due for renewal).
        harness.simulatorClock.advance(.seconds(65 * 60))
        harness.clientClock.advance(.seconds(25 * 60))
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
        #expect(harness.apns.connectionRecycles == 1)
        #expect(harness.simulator.statistics.apns[403] == 1)
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
    }

    @Test func expiredProviderTokenFaultOnAYoungTokenIsARetry() async throws {
        let harness = try DeliveryHarness()
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(SimulatorFault(status: 403, reason: "ExpiredProviderToken", times: 1),
                                   token: notification.deviceToken)
        #expect(await harness.apns.send(notification) == .retry(reason: "ExpiredProviderToken", retryAfter: nil))
        #expect(harness.apns.providerTokensIssued == 1)
        // Once the token is 20 minutes old the same answer earns a renewal and a resend.
        harness.simulator.setFault(SimulatorFault(status: 403, reason: "ExpiredProviderToken", times: 1),
                                   token: notification.deviceToken)
        harness.simulatorClock.advance(.seconds(21 * 60))
        harness.clientClock.advance(.seconds(21 * 60))
        #expect(await harness.apns.send(notification) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
    }

    @Test func tokenIsRenewedAfterFiftyMinutesWithoutAnyRejection() async throws {
        let harness = try DeliveryHarness(sharedClock: true)
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        harness.simulatorClock.advance(.seconds(50 * 60))
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
        harness.simulatorClock.advance(.seconds(49 * 60))
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
        #expect(harness.simulator.statistics.apns[403] == 0)
        #expect(harness.simulator.statistics.apns[429] == 0)
    }

    @Test func slowAnswersTimeOutAsRetries() async throws {
        let harness = try DeliveryHarness(requestTimeout: .milliseconds(300))
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(SimulatorFault(delayMs: 2000), token: notification.deviceToken)
        #expect(await harness.apns.send(notification) == .retry(reason: "timeout", retryAfter: nil))
    }
}
