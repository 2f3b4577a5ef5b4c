import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import Simulator

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
        // Never 0 by default: that would tell APNs to try once and keep nothing for an offline phone.
        #expect(record.header("apns-expiration") == nil)
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
        (SimulatorFault(status: 400, reason: "BadDeviceToken"), .tokenSuspect(reason: "BadDeviceToken")),
        (
            SimulatorFault(status: 429, reason: "TooManyRequests", retryAfter: 5),
            .retry(reason: "TooManyRequests", retryAfter: .seconds(5))
        ),
        (
            SimulatorFault(status: 500, reason: "InternalServerError"),
            .retry(reason: "InternalServerError", retryAfter: nil)
        ),
        (
            SimulatorFault(status: 503, reason: "ServiceUnavailable"),
            .retry(reason: "ServiceUnavailable", retryAfter: nil)
        ),
        (SimulatorFault(status: 503, reason: "Shutdown"), .retry(reason: "Shutdown", retryAfter: nil)),
        (SimulatorFault(status: 400, reason: "BadCollapseId"), .failed(reason: "BadCollapseId")),
        (
            SimulatorFault(status: 400, reason: "DeviceTokenNotForTopic"),
            .tokenSuspect(reason: "DeviceTokenNotForTopic")
        ),
        (SimulatorFault(status: 413, reason: "PayloadTooLarge"), .failed(reason: "PayloadTooLarge")),
        // Herald's configuration, not the delivery. The provider token is too young to renew here, so
        // InvalidProviderToken is not resent (providerTokenRefusedTwiceIsASetupFault covers the renewal).
        (SimulatorFault(status: 400, reason: "MissingTopic"), .setupFault(reason: "MissingTopic")),
        (SimulatorFault(status: 400, reason: "BadTopic"), .setupFault(reason: "BadTopic")),
        (SimulatorFault(status: 400, reason: "TopicDisallowed"), .setupFault(reason: "TopicDisallowed")),
        (
            SimulatorFault(status: 403, reason: "BadCertificateEnvironment"),
            .setupFault(reason: "BadCertificateEnvironment")
        ),
        (SimulatorFault(status: 403, reason: "BadCertificate"), .setupFault(reason: "BadCertificate")),
        (SimulatorFault(status: 403, reason: "InvalidProviderToken"), .setupFault(reason: "InvalidProviderToken")),
        (SimulatorFault(status: 403, reason: "MissingProviderToken"), .setupFault(reason: "MissingProviderToken")),
        (SimulatorFault(status: 403, reason: "UnrelatedKeyIdInToken"), .setupFault(reason: "UnrelatedKeyIdInToken")),
        (SimulatorFault(status: 403, reason: "Forbidden"), .setupFault(reason: "Forbidden")),
        (SimulatorFault(drop: true), .retry(reason: "connection_lost", retryAfter: nil)),
    ]

    @Test func eachFaultComesToItsResult() async throws {
        let harness = try DeliveryHarness()
        for (fault, expected) in Self.faults {
            let notification = DeliveryHarness.notification()
            harness.simulator.setFault(fault, token: notification.deviceToken)
            var result = await harness.apns.send(notification)
            if case .tokenInvalid(let reason, let since) = result {
                // The simulator's 410 carries the time the token stopped being valid, as APNs' does.
                #expect(since.map { abs($0.timeIntervalSinceNow) < 60 } == true, "\(fault)")
                result = .tokenInvalid(reason: reason)
            }
            #expect(result == expected, "\(fault)")
            #expect(!(result.reason ?? "").contains(notification.deviceToken))
        }
        // The connection survives all of that: a clean send still goes through.
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
    }

    @Test func oversizedPayloadIsRefusedByAPNsRulesNotByAFault() async throws {
        let harness = try DeliveryHarness()
        let big = #"{"aps":{},"x":""# + String(repeating: "x", count: 4100) + #""}"#
        #expect(
            await harness.apns.send(DeliveryHarness.notification(payload: big))
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

    @Test func expiredProviderTokenFaultOnAYoungTokenIsASetupFault() async throws {
        let harness = try DeliveryHarness()
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(
            SimulatorFault(status: 403, reason: "ExpiredProviderToken", times: 1),
            token: notification.deviceToken)
        // APNs calls a 5-minute-old token an hour old: the clocks disagree, which no delivery can fix.
        #expect(await harness.apns.send(notification) == .setupFault(reason: "ExpiredProviderToken"))
        #expect(harness.apns.providerTokensIssued == 1)
        // Once the token is 20 minutes old the same answer earns a renewal and a resend.
        harness.simulator.setFault(
            SimulatorFault(status: 403, reason: "ExpiredProviderToken", times: 1),
            token: notification.deviceToken)
        harness.simulatorClock.advance(.seconds(21 * 60))
        harness.clientClock.advance(.seconds(21 * 60))
        #expect(await harness.apns.send(notification) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
    }

    @Test(arguments: ["InvalidProviderToken", "ExpiredProviderToken"])
    func providerTokenRefusedTwiceIsASetupFault(_ reason: String) async throws {
        let harness = try DeliveryHarness()
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        // Old enough to renew (20 minutes) on both clocks.
        harness.simulatorClock.advance(.seconds(21 * 60))
        harness.clientClock.advance(.seconds(21 * 60))
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(SimulatorFault(status: 403, reason: reason), token: notification.deviceToken)
        #expect(await harness.apns.send(notification) == .setupFault(reason: reason))
        // One renewal, one resend, on fresh connections.
        #expect(harness.apns.providerTokensIssued == 2)
        #expect(harness.apns.connectionRecycles == 1)
        #expect(harness.simulator.received(token: notification.deviceToken).count == 2)
    }

    @Test func invalidProviderTokenOnceIsFixedByTheRenewal() async throws {
        let harness = try DeliveryHarness()
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .sent)
        harness.simulatorClock.advance(.seconds(21 * 60))
        harness.clientClock.advance(.seconds(21 * 60))
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(
            SimulatorFault(status: 403, reason: "InvalidProviderToken", times: 1),
            token: notification.deviceToken)
        #expect(await harness.apns.send(notification) == .sent)
        #expect(harness.apns.providerTokensIssued == 2)
    }

    @Test func aProviderTokenFromTheFutureIsRefusedByTheSimulatorAsASetupFault() async throws {
        // The client's clock runs two hours ahead: every token it signs has an iat APNs calls invalid.
        let harness = try DeliveryHarness()
        harness.clientClock.advance(.seconds(2 * 3600))
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .setupFault(reason: "InvalidProviderToken"))
        #expect(harness.apns.providerTokensIssued == 1)
        // Twenty minutes on, the token may be renewed: the renewed one is refused too.
        harness.simulatorClock.advance(.seconds(21 * 60))
        harness.clientClock.advance(.seconds(21 * 60))
        #expect(await harness.apns.send(DeliveryHarness.notification()) == .setupFault(reason: "InvalidProviderToken"))
        #expect(harness.apns.providerTokensIssued == 2)
        #expect(harness.simulator.statistics.apns[403] == 3)
        #expect(harness.simulator.statistics.apns[200] == 0)
    }

    /// Sends `count` notifications at once, each answered late as `fault` says, and returns the most streams seen
    /// in flight at the same time on `transport` (polled until every send finished).
    static func peakConcurrency(
        _ harness: DeliveryHarness, client: APNsClient, transport: HTTP2Client,
        count: Int, fault: SimulatorFault
    ) async -> (peak: Int, results: [DeliveryResult]) {
        let notifications = (0..<count).map { _ in DeliveryHarness.notification() }
        for notification in notifications {
            harness.simulator.setFault(fault, token: notification.deviceToken)
        }
        let peak = Mutex(0)
        let done = Atomic<Bool>(false)
        // Sampled every 2 ms until every send finished.
        async let watch = eventually(timeout: .seconds(120), interval: .milliseconds(2)) {
            let now = transport.statistics.streamsInFlight
            peak.withLock { $0 = max($0, now) }
            return done.load(ordering: .relaxed)
        }
        let results = await withTaskGroup(of: DeliveryResult.self) { group in
            for notification in notifications {
                group.addTask { await client.send(notification) }
            }
            return await group.reduce(into: [DeliveryResult]()) { $0.append($1) }
        }
        done.store(true, ordering: .relaxed)
        _ = await watch
        return (peak.withLock { $0 }, results)
    }

    @Test(arguments: [
        SimulatorFault(status: 410, reason: "Unregistered"), SimulatorFault(status: 400, reason: "BadDeviceToken"),
        SimulatorFault(status: 400, reason: "BadCollapseId"), SimulatorFault(status: 500),
    ])
    func anyAnswerButA403LiftsTheOneStreamLimit(_ first: SimulatorFault) async throws {
        let harness = try DeliveryHarness()
        let (client, transports) = try harness.observedAPNsClient(connections: 1)
        defer { client.shutdown() }
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(first, token: notification.deviceToken)
        let firstResult = await client.send(notification)
        #expect(firstResult != .sent)
        let transport = try #require(transports.first)
        // The same answer again, late: no 2xx ever arrives on this connection.
        var late = first
        late.delayMs = 1500
        let (peak, results) = await Self.peakConcurrency(
            harness, client: client, transport: transport,
            count: 6, fault: late)
        #expect(results.allSatisfy { $0 == firstResult })
        // The JWT was accepted: the connection now carries many streams at once.
        #expect(peak > 1)
        #expect(transport.statistics.connectionsOpened == 1)
    }

    @Test func a403KeepsTheOneStreamLimit() async throws {
        let harness = try DeliveryHarness()
        let (client, transports) = try harness.observedAPNsClient(connections: 1)
        defer { client.shutdown() }
        let notification = DeliveryHarness.notification()
        harness.simulator.setFault(SimulatorFault(status: 403, reason: "Forbidden"), token: notification.deviceToken)
        #expect(await client.send(notification) == .setupFault(reason: "Forbidden"))
        let transport = try #require(transports.first)
        // Every answer is a 403 again: the limit never lifts.
        let (peak, results) = await Self.peakConcurrency(
            harness, client: client, transport: transport, count: 3,
            fault: SimulatorFault(status: 403, reason: "Forbidden", delayMs: 300))
        #expect(results.allSatisfy { $0 == .setupFault(reason: "Forbidden") })
        #expect(peak == 1)
        #expect(transport.statistics.queued == 0)
    }

    @Test func aStoppedSimulatorIsNotHammeredWithConnects() async throws {
        let harness = try DeliveryHarness()
        let (client, transports) = try harness.observedAPNsClient(
            connections: 1, connectBackoff: ExponentialBackoff(base: .seconds(60), maximum: .seconds(60)))
        defer { client.shutdown() }
        #expect(await client.send(DeliveryHarness.notification()) == .sent)
        harness.simulator.stop()
        let transport = try #require(transports.first)
        // The connection drops with the simulator; the first send after that tries to reconnect and fails, the
        // rest fail at once inside the backoff (at least 30 s here) instead of each connecting again.
        var results: [DeliveryResult] = []
        for _ in 0..<30 { results.append(await client.send(DeliveryHarness.notification())) }
        #expect(
            results.allSatisfy {
                if case .retry = $0 { return true }
                return false
            })
        #expect(results.contains(.retry(reason: "connect_failed", retryAfter: nil)))
        let statistics = transport.statistics
        #expect(statistics.connectionsOpened == 2)
        #expect(statistics.requestsFailedInConnectBackoff >= 28)
        #expect(statistics.consecutiveConnectFailures >= 1)
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
