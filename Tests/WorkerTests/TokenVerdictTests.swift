import Foundation
import HeraldCore
import HeraldTestSupport
import Store
import Testing
import Worker

@testable import Simulator

/// Tokens stay true: a verdict that may blame Herald's setup (APNs BadDeviceToken and
/// DeviceTokenNotForTopic, FCM INVALID_ARGUMENT about the token) retires a token only once the same upstream
/// accepts another; a storm of them pauses the upstream; a wrong FCM project is a setup fault.
@Suite(.requiresDatabase) struct TokenVerdictTests {
    /// Quick to judge: a suspect waits 300 ms for a success, is tried again after 400 ms, storms need 5 tokens.
    static func quick(_ configuration: inout WorkerConfiguration) {
        configuration.tokenVerdicts.wait = .milliseconds(300)
        configuration.tokenVerdicts.recheck = .milliseconds(400)
        configuration.tokenVerdicts.maximumRecheck = .milliseconds(400)
        configuration.tokenVerdicts.stormTokens = 5
        configuration.pauses.base = .milliseconds(300)
        configuration.pauses.maximum = .seconds(1)
    }

    /// `quick`, but a verdict is held long enough that it is still held when the other token's success comes,
    /// however slow the machine: a verdict whose wait ended is deferred, and only a success after the next one decides.
    static func holding(_ configuration: inout WorkerConfiguration) {
        quick(&configuration)
        configuration.tokenVerdicts.wait = .seconds(600)
    }

    @Test func aSuspectVerdictWithNoSuccessRetiresNothingAndSpendsNoAttempt() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(
            SimulatorFault(status: 400, reason: "BadDeviceToken"), token: WorkerHarness.apnsToken(0))
        let worker = try harness.startWorker(Self.quick)
        try await harness.waitUntil("asked at least three times") { harness.timesReceived(queued.deliveries[0]) >= 3 }
        #expect(try harness.db.outcome(of: queued.deliveries[0]) == nil)
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE attempts > 1") == 0)
        #expect(worker.metrics.tokenSuspects(.apns) >= 2)
        #expect(worker.metrics.render().contains(#"herald_worker_token_suspects_total{upstream="apns"} "#))
        #expect(worker.pausedUpstreams.isEmpty, "one token is no storm")

        // The setup was right after all (the token works now): delivered, first attempt.
        harness.simulator.clearFaults()
        try await harness.waitUntil("delivered") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "sent")
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.attempts == 1)
    }

    @Test(arguments: ["BadDeviceToken", "DeviceTokenNotForTopic"])
    func aSuspectVerdictStandsOnceTheUpstreamAcceptsAnotherToken(reason: String) async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("bad", apnsToken: WorkerHarness.apnsToken(0))
        try harness.db.user("good", apnsToken: WorkerHarness.apnsToken(1))
        harness.simulator.setFault(SimulatorFault(status: 400, reason: reason), token: WorkerHarness.apnsToken(0))
        let worker = try harness.startWorker(Self.holding)
        let request = try harness.db.request(partner: partner.id, deliveries: 2)
        let bad = try harness.db.delivery(request: request, partner: partner.id, user: "bad", service: .apns)
        try await harness.waitUntil("the verdict held") {
            worker.metrics.tokenSuspects(.apns) >= 1
        }
        #expect(try harness.db.outcome(of: bad) == nil)
        // Another token of the same upstream accepted after the verdict: the verdict stands.
        let good = try harness.db.delivery(request: request, partner: partner.id, user: "good", service: .apns)
        try await harness.waitUntil("both recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: good)?.outcome == "sent")
        let outcome = try #require(try harness.db.outcome(of: bad))
        #expect(outcome.outcome == "token_invalid")
        #expect(outcome.error == reason)
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = 'bad' AND apns_token_invalidated_at IS NOT NULL
                   AND apns_token_invalid_reason = $1
                """, [reason]) == 1)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM devices WHERE user_id = 'good' AND apns_token_invalidated_at IS NULL") == 1)

        // The token gets nothing more until the host registers the device again.
        let received = harness.timesReceived(bad)
        let next = try harness.db.request(partner: partner.id, deliveries: 1)
        let skipped = try harness.db.delivery(request: next, partner: partner.id, user: "bad", service: .apns)
        try await harness.waitUntil("skipped") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: skipped)?.error == "token_invalidated")
        #expect(harness.simulator.received().count(where: { $0.token == WorkerHarness.apnsToken(0) }) == received)
        // Recorded once: the skipped send did not overwrite the verdict's reason.
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM devices WHERE user_id = 'bad' AND apns_token_invalid_reason = $1",
                [reason]) == 1)

        harness.simulator.clearFaults()
        // The host's registration (the statement PUT .../devices/{deviceId} runs), with the same token.
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM herald_put_device('bad', 'iphone', 'ios', 'sandbox', NULL, $1, NULL, NULL, NULL)
                """, [WorkerHarness.apnsToken(0)]) == 1)
        let again = try harness.db.request(partner: partner.id, deliveries: 1)
        let back = try harness.db.delivery(request: again, partner: partner.id, user: "bad", service: .apns)
        try await harness.waitUntil("sent after the registration") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: back)?.outcome == "sent")
    }

    @Test func aStormOfVerdictsPausesTheUpstreamAndAFixDeliversEverything() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 8)
        for user in 0..<8 {
            harness.simulator.setFault(
                SimulatorFault(status: 400, reason: "BadDeviceToken"), token: WorkerHarness.apnsToken(user))
        }
        let worker = try harness.startWorker(Self.quick)
        let health = try WorkerHealthServer(worker: worker, host: "127.0.0.1", port: 0)
        defer { health.stop() }
        try await harness.waitUntil("the upstream paused") {
            worker.pausedUpstreams["apns"] == "token_storm_BadDeviceToken"
        }
        let readiness = try TestHTTPClient.send(port: health.port, method: "GET", path: "/readyz")
        #expect(readiness.status == 503)
        #expect(readiness.text.contains("token_storm_BadDeviceToken"), "\(readiness.text)")
        let metrics = worker.metrics.render()
        #expect(metrics.contains(#"herald_worker_upstream_paused{upstream="apns"} 1"#))
        #expect(
            metrics.contains(
                #"herald_worker_upstream_pause_reason{upstream="apns",reason="token_storm_BadDeviceToken"} 1"#))
        // Storm after storm while the setup stays wrong (two more refused probes show it lasted): nothing retired,
        // nothing failed, no attempt spent.
        func refused() -> Int { harness.simulator.received().filter { $0.reason == "BadDeviceToken" }.count }
        let refusedAtPause = refused()
        try await harness.waitUntil("two more probes refused") { refused() >= refusedAtPause + 2 }
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
        for id in queued.deliveries { #expect(try harness.db.outcome(of: id) == nil) }
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE attempts > 1") == 0)

        // The setup is fixed (here: the upstream accepts the tokens): every delivery arrives, first attempt.
        harness.simulator.clearFaults()
        try await harness.waitUntil("everything delivered") { try harness.outstanding() == 0 }
        for id in queued.deliveries {
            let outcome = try #require(try harness.db.outcome(of: id))
            #expect(outcome.outcome == "sent")
            #expect(outcome.attempts == 1)
        }
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
        try await harness.waitUntil("resumed") { worker.pausedUpstreams.isEmpty }
    }

    /// A cleanup of uninstalled apps (410 for many tokens at once) is no storm: each token is retired at once.
    @Test func manyUnregisteredTokensAreRetiredAtOnceWithoutAPause() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 12)
        for user in 0..<12 {
            harness.simulator.setFault(
                SimulatorFault(status: 410, reason: "Unregistered"), token: WorkerHarness.apnsToken(user))
        }
        let worker = try harness.startWorker(Self.quick)
        try await harness.waitUntil("all recorded") { try harness.outstanding() == 0 }
        for id in queued.deliveries { #expect(try harness.db.outcome(of: id)?.outcome == "token_invalid") }
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE apns_token_invalid_reason = 'Unregistered' AND apns_token_invalidated_at IS NOT NULL
                """) == 12)
        #expect(worker.pausedUpstreams.isEmpty)
        #expect(worker.metrics.tokenSuspects(.apns) == 0)
    }

    @Test func fcmInvalidArgumentAboutATokenIsSuspectToo() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("bad", fcmToken: "fcm-bad")
        try harness.db.user("good", fcmToken: "fcm-good")
        harness.simulator.setFault(SimulatorFault(status: 400, reason: "INVALID_ARGUMENT"), token: "fcm-bad")
        let worker = try harness.startWorker(Self.holding)
        let request = try harness.db.request(partner: partner.id, deliveries: 2)
        let bad = try harness.db.delivery(request: request, partner: partner.id, user: "bad", service: .fcm)
        try await harness.waitUntil("the verdict held") {
            worker.metrics.tokenSuspects(.fcm) >= 1
        }
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE fcm_token_invalidated_at IS NOT NULL") == 0)
        try harness.db.delivery(request: request, partner: partner.id, user: "good", service: .fcm)
        try await harness.waitUntil("both recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: bad)?.outcome == "token_invalid")
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = 'bad' AND fcm_token_invalid_reason = 'INVALID_ARGUMENT'
                """) == 1)
    }

    /// The setup mistake replayed end to end: a worker started with another Firebase project's service account,
    /// pushes queued (group rows, as the intake writes them), the credentials fixed and the worker restarted:
    /// every delivery arrives at its first attempt, and no token was retired.
    @Test func theWrongFirebaseProjectRetiresNothingAndTheFixDeliversEverything() async throws {
        let harness = try WorkerHarness(otherFCMAccount: true, fcmTokenProject: TestCredentials.shared.fcmProjectID)
        let queued = try harness.queueThroughIntake(users: 20, android: true)
        let fcmDeliveries = stride(from: 1, to: queued.deliveries.count, by: 2).map { queued.deliveries[$0] }
        let wrong = try harness.startWorker {
            $0.fcm?.credentialsFile = harness.fcmOtherCredentialsFile
            $0.pauses.base = .milliseconds(200)
            $0.pauses.maximum = .milliseconds(500)
        }
        try await harness.waitUntil("the FCM upstream paused") { wrong.pausedUpstreams["fcm"] == "SENDER_ID_MISMATCH" }
        try await harness.waitUntil("the APNs half delivered") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE service = 'apns'") == 0
        }
        // Probes keep being refused (two more); nothing of FCM is finished, no token retired, no attempt spent.
        func refused() -> Int {
            harness.simulator.received().filter { $0.service == .fcm && $0.reason == "SENDER_ID_MISMATCH" }.count
        }
        let refusedAtPause = refused()
        try await harness.waitUntil("two more probes refused") { refused() >= refusedAtPause + 2 }
        for id in fcmDeliveries { #expect(try harness.db.outcome(of: id) == nil) }
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE fcm_token_invalidated_at IS NOT NULL") == 0)
        wrong.drain()

        // The operator mounts the right project's service account and restarts the worker.
        let fixed = try harness.startWorker()
        try await harness.waitUntil("every delivery arrived") { try harness.outstanding() == 0 }
        for id in queued.deliveries {
            let outcome = try #require(try harness.db.outcome(of: id))
            #expect(outcome.outcome == "sent", "\(outcome)")
            #expect(outcome.attempts == 1, "a paused row keeps its attempts")
        }
        #expect(try harness.db.counts(of: queued.request) == (sent: 40, failed: 0))
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE fcm_token_invalidated_at IS NOT NULL OR apns_token_invalidated_at IS NOT NULL
                """) == 0)
        #expect(fixed.pausedUpstreams.isEmpty)
    }

    @Test func aDrainingWorkerGivesItsSuspectRowsBackAtOnce() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(
            SimulatorFault(status: 400, reason: "BadDeviceToken"), token: WorkerHarness.apnsToken(0))
        let worker = try harness.startWorker {
            Self.quick(&$0)
            // Held far longer than the test takes, however slow the machine; a drain that waited for it would
            // take its send share of the deadline (0.7 x 60 s).
            $0.tokenVerdicts.wait = .seconds(600)
            $0.drainTimeout = .seconds(60)
        }
        try await harness.waitUntil("the verdict held") {
            worker.metrics.tokenSuspects(.apns) >= 1 && worker.inFlight == 1
        }
        #expect(harness.timesReceived(queued.deliveries[0]) == 1)
        let started = ContinuousClock.now
        worker.drain()
        #expect(ContinuousClock.now - started < .seconds(30), "the drain did not wait for the verdict")
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'pending' AND attempts = 0") == 1)
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 0)
    }
}
