import Foundation
import HeraldCore
import HeraldTestSupport
import Store
import Testing
import Worker

@testable import Simulator

/// Every delivery outcome, end to end: real Postgres, the worker, the APNs and FCM clients and
/// the simulator over TLS HTTP/2.
@Suite(.requiresDatabase) struct DeliveryOutcomeTests {
    @Test func deliversToAPNsAndFCMWithTheRightHeadersAndRollsUp() async throws {
        let harness = try WorkerHarness()
        let expiresAt = Date().addingTimeInterval(3600)
        let queued = try harness.queue(users: 1, android: true, expiresAt: expiresAt)
        try harness.startWorker()
        try await harness.waitUntil("both delivered") { try harness.outstanding() == 0 }

        #expect(try harness.db.counts(of: queued.request) == (sent: 2, failed: 0))
        for id in queued.deliveries { #expect(try harness.db.outcome(of: id)?.outcome == "sent") }
        let received = harness.simulator.received()
        let apns = try #require(received.first { $0.service == .apns })
        let apnsID = queued.deliveries[0].uuidString.lowercased()
        #expect(apns.status == 200)
        #expect(apns.token == WorkerHarness.apnsToken(0))
        #expect(apns.header("apns-id") == apnsID)
        #expect(apns.header("apns-collapse-id") == apnsID)
        #expect(apns.header("apns-push-type") == "alert")
        #expect(apns.header("apns-topic") == harness.credentials.apnsTopic)
        #expect(apns.header("apns-expiration") == String(Int(expiresAt.timeIntervalSince1970.rounded(.up))))
        let fcm = try #require(received.first { $0.service == .fcm })
        #expect(fcm.status == 200)
        #expect(fcm.token == WorkerHarness.fcmToken(0))
        let body = String(decoding: fcm.body, as: UTF8.self)
        #expect(body.contains(#""ttl":""#))
        #expect(body.contains(queued.deliveries[1].uuidString.lowercased()))
    }

    /// A 410 is the app gone from the phone: retired at once (a suspect verdict waits, TokenVerdictTests).
    @Test(arguments: [(410, "Unregistered"), (410, "ExpiredToken")])
    func aDeadAPNsTokenIsInvalidatedAndNeverUsedAgain(status: Int, reason: String) async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(SimulatorFault(status: status, reason: reason), token: WorkerHarness.apnsToken(0))
        try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "token_invalid")
        #expect(try harness.db.counts(of: queued.request) == (sent: 0, failed: 1))
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE apns_token_invalidated_at IS NOT NULL") == 1)

        // A later delivery to that device is recorded without reaching APNs.
        let received = harness.simulator.received().count
        let request = try harness.db.request(partner: queued.partner, deliveries: 1)
        let later = try harness.db.delivery(request: request, partner: queued.partner, user: "user-0", service: .apns)
        try await harness.waitUntil("later recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: later)?.outcome == "token_invalid")
        #expect(harness.simulator.received().count == received)
    }

    @Test func fcmUnregisteredInvalidatesTheToken() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("a", fcmToken: "fcm-dead")
        let request = try harness.db.request(partner: partner.id, deliveries: 1)
        let id = try harness.db.delivery(request: request, partner: partner.id, user: "a", service: .fcm)
        harness.simulator.setFault(SimulatorFault(status: 404), token: "fcm-dead")
        try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: id)?.outcome == "token_invalid")
        #expect(try harness.db.count("SELECT count(*) FROM devices WHERE fcm_token_invalidated_at IS NOT NULL") == 1)
    }

    @Test func aPermanentRejectionFailsWithoutRetry() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(
            SimulatorFault(status: 400, reason: "BadCollapseId"),
            token: WorkerHarness.apnsToken(0))
        try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        let outcome = try harness.db.outcome(of: queued.deliveries[0])
        #expect(outcome?.outcome == "failed")
        #expect(outcome?.attempts == 1)
        #expect(outcome?.error == "BadCollapseId")
        #expect(harness.timesReceived(queued.deliveries[0]) == 1)
    }

    @Test func throttlingIsRetriedAfterRetryAfterThenSent() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(
            SimulatorFault(status: 429, reason: "TooManyRequests", times: 1, retryAfter: 1),
            token: WorkerHarness.apnsToken(0))
        let started = Date()
        try harness.startWorker()
        try await harness.waitUntil("sent after a retry") { try harness.outstanding() == 0 }
        let outcome = try harness.db.outcome(of: queued.deliveries[0])
        #expect(outcome?.outcome == "sent")
        #expect(outcome?.attempts == 2)
        // Retry-After: 1 s was honoured although the backoff alone was at most 20 ms.
        #expect(Date().timeIntervalSince(started) >= 1)
    }

    @Test func serverErrorsAreRetriedUpToMaxAttemptsThenDead() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(
            SimulatorFault(status: 503, reason: "ServiceUnavailable"), token: WorkerHarness.apnsToken(0))
        try harness.startWorker { $0.retry.maxAttempts = 3 }
        try await harness.waitUntil("dead") { try harness.outstanding() == 0 }
        let outcome = try harness.db.outcome(of: queued.deliveries[0])
        #expect(outcome?.outcome == "dead")
        #expect(outcome?.attempts == 3)
        #expect(harness.timesReceived(queued.deliveries[0]) == 3)
        #expect(try harness.db.counts(of: queued.request) == (sent: 0, failed: 1))
    }

    @Test func fcmUnavailableIsRetried() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("a", fcmToken: "fcm-busy")
        let request = try harness.db.request(partner: partner.id, deliveries: 1)
        let id = try harness.db.delivery(request: request, partner: partner.id, user: "a", service: .fcm)
        // (QUOTA_EXCEEDED waits at least a minute: FCMSimulatorTests covers it.)
        harness.simulator.setFault(SimulatorFault(status: 503, times: 1), token: "fcm-busy")
        try harness.startWorker()
        try await harness.waitUntil("sent") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: id)?.outcome == "sent")
        #expect(try harness.db.outcome(of: id)?.attempts == 2)
    }

    @Test func aDeliveryPastItsTTLIsExpiredWithoutSending() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1, expiresAt: Date().addingTimeInterval(-5))
        try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "expired")
        #expect(harness.simulator.received().isEmpty)
        #expect(try harness.db.counts(of: queued.request) == (sent: 0, failed: 1))
    }

    @Test func aRetryThatWouldLandPastTheTTLExpires() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1, expiresAt: Date().addingTimeInterval(2))
        harness.simulator.setFault(SimulatorFault(status: 429, retryAfter: 30), token: WorkerHarness.apnsToken(0))
        // Retry-After is capped by the maximum delay: let it be longer than the TTL.
        try harness.startWorker { $0.retry.maxDelay = .seconds(60) }
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "expired")
    }

    @Test func anOptOutAfterEnqueueSuppressesTheDelivery() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("a", apnsToken: WorkerHarness.apnsToken(0))
        let request = try harness.db.request(partner: partner.id, deliveries: 1)
        let id = try harness.db.delivery(request: request, partner: partner.id, user: "a", service: .apns)
        try harness.db.connection.query(
            "INSERT INTO opt_outs (user_id, mini_app_id) VALUES ('a', $1)", [partner.miniApp])
        try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: id)?.outcome == "suppressed")
        #expect(harness.simulator.received().isEmpty)
    }

    @Test func aDroppedConnectionIsRetried() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(SimulatorFault(times: 1, drop: true), token: WorkerHarness.apnsToken(0))
        try harness.startWorker()
        try await harness.waitUntil("sent") { try harness.outstanding() == 0 }
        let outcome = try harness.db.outcome(of: queued.deliveries[0])
        #expect(outcome?.outcome == "sent")
        #expect(outcome?.attempts == 2)
    }

    /// `grouped`: the 60 deliveries as the intake writes them, two group rows of 30 (sql/016_delivery_groups.sql).
    @Test(arguments: [false, true])
    func goAwayMidBatchLosesAndDuplicatesNothing(grouped: Bool) async throws {
        let harness = try WorkerHarness()
        let queued = grouped ? try harness.queueThroughIntake(users: 60) : try harness.queue(users: 60)
        // The 30th token's request makes the simulator send GOAWAY: it and every later stream on
        // that connection are unprocessed and must be resent on another connection.
        harness.simulator.setFault(SimulatorFault(times: 1, goAway: true), token: WorkerHarness.apnsToken(29))
        try harness.startWorker()
        try await harness.waitUntil("all sent") { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 60, failed: 0))
        let accepted = harness.simulator.received().filter { $0.status == 200 }
        #expect(accepted.count == 60)
        #expect(Set(accepted.compactMap { $0.header("apns-id") }).count == 60)
    }

    @Test func twoWorkersOnOneQueueNeverSendADeliveryTwice() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("u", apnsToken: WorkerHarness.apnsToken(0))
        let request = try harness.db.request(partner: partner.id, deliveries: 3000)
        try harness.db.deliveries(count: 3000, request: request, partner: partner.id, user: "u")
        try harness.startWorker { $0.claimer.batchSize = 50 }
        try harness.startWorker { $0.claimer.batchSize = 50 }
        try await harness.waitUntil("all sent", timeout: .seconds(60)) { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: request) == (sent: 3000, failed: 0))
        let ids = harness.simulator.received().compactMap { $0.header("apns-id") }
        #expect(ids.count == 3000)
        #expect(Set(ids).count == 3000)
        #expect(try harness.db.count("SELECT count(DISTINCT id) FROM delivery_history WHERE outcome = 'sent'") == 3000)
    }

    @Test func metricsCountOutcomesPerUpstream() async throws {
        let harness = try WorkerHarness()
        _ = try harness.queue(users: 2, android: true)
        harness.simulator.setFault(SimulatorFault(status: 410), token: WorkerHarness.apnsToken(1))
        let worker = try harness.startWorker()
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(worker.metrics.value("sent", .apns) == 1)
        #expect(worker.metrics.value("token_invalid", .apns) == 1)
        #expect(worker.metrics.value("sent", .fcm) == 2)
        #expect(worker.metrics.value("claimed", .apns) == 2)
        let text = worker.metrics.render()
        #expect(text.contains(#"herald_worker_deliveries_total{upstream="apns",outcome="sent"} 1"#))
        #expect(text.contains("herald_worker_send_duration_seconds_bucket"))
        #expect(text.contains("herald_queue_oldest_due_seconds{lane=\"realtime\"}"))
        #expect(text.contains("herald_worker_in_flight_limit \(worker.configuration.claimer.maxInFlight)\n"))
        // How full the pipe is: nothing in flight now, and the connections' streams open to the next sends
        // (APNs' provider token was accepted, so more than the one stream of a new connection).
        let pipes = worker.pipes
        #expect(pipes[.apns]?.streamsInFlight == 0)
        #expect((pipes[.apns]?.streamsAvailable ?? 0) > 1)
        #expect((pipes[.fcm]?.streamsAvailable ?? 0) > 1)
        let withPipes = worker.metrics.render(pipes: pipes)
        #expect(withPipes.contains(#"herald_worker_upstream_streams_in_flight{upstream="apns"} 0"#))
        #expect(withPipes.contains(#"herald_worker_upstream_streams_available{upstream="fcm"} "#))
        #expect(withPipes.contains(#"herald_worker_upstream_queued{upstream="apns"} 0"#))
    }

    @Test func aPollOnlyWorkerDeliversWithoutListening() async throws {
        let harness = try WorkerHarness()
        let worker = try harness.startWorker { $0.listener.enabled = false }
        // Queued after the worker started, with no NOTIFY: only the poll can find it.
        let queued = try harness.queue(users: 1)
        try await harness.waitUntil("sent by polling") { try harness.outstanding() == 0 }
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "sent")
        #expect(worker.isReady)
    }
}
