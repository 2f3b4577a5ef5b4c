import Foundation
import HeraldCore
import HeraldTestSupport
import Store
import Synchronization
import Testing
import Worker

@testable import Simulator

/// The bulk lane (backfills, replays) beside realtime traffic: a worker holds at most
/// `maxBulkInFlight` bulk rows, so a realtime push never queues behind a whole window of bulk sends
/// (sql/functions/claim_deliveries.sql), and the bulk lane still drains to the end.
@Suite(.requiresDatabase) struct BulkLaneTests {
    let harness: WorkerHarness

    init() throws { harness = try WorkerHarness() }

    /// Samples the worker's rows in flight on a thread of its own (not the test's task, which a busy
    /// suite may resume seconds late) and keeps the largest count seen.
    final class InFlightSampler: @unchecked Sendable {
        let most = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)

        func start(_ worker: DeliveryWorker) {
            Thread.detachNewThread { [self] in
                // Every 5 ms until stopped.
                try? waitFor("the sampler stopped", timeout: .seconds(600), interval: .milliseconds(5)) {
                    let now = worker.inFlight
                    if now > most.load(ordering: .relaxed) { most.store(now, ordering: .relaxed) }
                    return stop.load(ordering: .relaxed)
                }
            }
        }
    }

    @Test func aWorkerHoldsAtMostItsBulkAllowanceAndRealtimeRowsGoPastTheBacklog() async throws {
        let partner = try harness.db.partner()
        try harness.db.user("bulk-user", apnsToken: WorkerHarness.apnsToken(0))
        try harness.db.user("live-user", apnsToken: WorkerHarness.apnsToken(1))
        // Every bulk send takes 200 ms at the simulator: 1,500 of them, 20 at a time, take 15 s.
        harness.simulator.setFault(SimulatorFault(delayMs: 200), token: WorkerHarness.apnsToken(0))
        let backfill = try harness.db.request(partner: partner.id, deliveries: 1_500)
        try harness.db.deliveries(count: 1_500, request: backfill, partner: partner.id, user: "bulk-user", lane: 1)
        // A realtime push that comes due 3 s into the drain, with most of the backlog still queued.
        let live = try harness.db.request(partner: partner.id, deliveries: 1)
        let liveID = try harness.db.delivery(
            request: live, partner: partner.id, user: "live-user", service: .apns,
            availableAt: Date().addingTimeInterval(3))

        let worker = try harness.startWorker {
            $0.claimer.maxBulkInFlight = 20
            $0.claimer.maxInFlight = 2_000
            $0.claimer.batchSize = 200
        }
        let sampler = InFlightSampler()
        sampler.start(worker)
        defer { sampler.stop.store(true, ordering: .relaxed) }
        try await harness.waitUntil("the bulk lane drained", timeout: .seconds(120)) { try harness.outstanding() == 0 }
        sampler.stop.store(true, ordering: .relaxed)

        // Never more than the allowance of bulk rows, plus the one realtime row.
        let most = sampler.most.load(ordering: .relaxed)
        #expect(most > 0 && most <= 21, "\(most) rows in flight at most")
        #expect(try harness.db.counts(of: backfill).sent == 1_500)
        // From the history, whatever the test's own timing: how many bulk sends finished between the
        // realtime row coming due and its own send. At 100 bulk rows a second it waited for a few of them
        // at most; without the allowance the worker holds the whole backlog at once and the realtime row
        // queues behind it on the upstream connections.
        // The realtime row was due 3 s after it was queued (its history keeps the queueing time).
        let waited = try harness.db.connection.query(
            """
            SELECT count(*) FILTER (WHERE b.finished_at < d.finished_at AND b.finished_at >= d.created_at + interval '3 seconds'),
                   count(*) FILTER (WHERE b.finished_at > d.finished_at)
              FROM delivery_history d, delivery_history b
             WHERE d.id = $1 AND b.request_id = $2
            """, [liveID, backfill.id]
        ).first!
        let sentWhileDue = try waited.int(0)
        let sentAfter = try waited.int(1)
        #expect(
            sentAfter > 600, "the realtime push went out after most of the backlog: \(sentAfter) bulk rows after it")
        #expect(sentWhileDue < 400, "\(sentWhileDue) bulk rows were sent while the realtime push waited")
        #expect(harness.timesReceived(liveID) == 1)
    }

    @Test func theAllowanceIsReadFromTheEnvironmentAndChecked() throws {
        let credentials = TestCredentials.shared
        var environment = [
            "HERALD_DATABASE_URL": "postgresql://localhost/herald",
            "HERALD_APNS_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_KEY_ID": "ABCDEFGHIJ",
            "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPIC": "one.based.app",
        ]
        #expect(try WorkerConfiguration.fromEnvironment(environment).claimer.maxBulkInFlight == 200)
        environment["HERALD_WORKER_MAX_BULK_IN_FLIGHT"] = "50"
        #expect(try WorkerConfiguration.fromEnvironment(environment).claimer.maxBulkInFlight == 50)
        environment["HERALD_WORKER_MAX_BULK_IN_FLIGHT"] = "0"
        do {
            _ = try WorkerConfiguration.fromEnvironment(environment)
            Issue.record("0 was accepted")
        } catch {
            #expect(error.variable == "HERALD_WORKER_MAX_BULK_IN_FLIGHT")
        }
    }
}
