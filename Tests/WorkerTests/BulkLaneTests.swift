import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Store
import Testing
import Worker

/// The bulk lane (backfills, replays) beside realtime traffic: a worker holds at most
/// `maxBulkInFlight` bulk rows, so a realtime push never queues behind a whole window of bulk sends
/// (sql/012_claim_bulk_limit.sql), and the bulk lane still drains to the end.
@Suite(.requiresDatabase) struct BulkLaneTests {
    let harness: WorkerHarness

    init() throws { harness = try WorkerHarness() }

    // Synchronous, with blocking waits: the states checked last only while the backlog drains, and an
    // async test's task may resume seconds late on a busy machine (WorkerHarness.waitUntil).
    @Test func aWorkerHoldsAtMostItsBulkAllowanceAndRealtimeRowsGoPastTheBacklog() throws {
        let partner = try harness.db.partner()
        try harness.db.user("bulk-user", apnsToken: WorkerHarness.apnsToken(0))
        try harness.db.user("live-user", apnsToken: WorkerHarness.apnsToken(1))
        // Every bulk send takes 200 ms at the simulator (1,500 of them, 20 at a time: 15 s), so the backlog
        // lasts long enough to look at.
        harness.simulator.setFault(SimulatorFault(delayMs: 200), token: WorkerHarness.apnsToken(0))
        let backfill = try harness.db.request(partner: partner.id, deliveries: 1_500)
        try harness.db.deliveries(count: 1_500, request: backfill, partner: partner.id, user: "bulk-user", lane: 1)

        let worker = try harness.startWorker {
            $0.claimer.maxBulkInFlight = 20
            $0.claimer.maxInFlight = 2_000
            $0.claimer.batchSize = 200
        }
        try harness.waitUntilBlocking("bulk rows in flight") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased' AND lane = 1") > 0
        }
        // Sampled while the bulk lane drains: never more than the allowance leased (one worker).
        var mostLeased = 0
        for _ in 0..<20 {
            mostLeased = max(mostLeased, try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased' AND lane = 1"))
            #expect(worker.inFlight <= 20)
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(mostLeased > 0 && mostLeased <= 20, "\(mostLeased)")

        // A realtime push while hundreds of bulk rows wait: claimed and sent at once, not after them.
        let live = try harness.db.request(partner: partner.id, deliveries: 1)
        let bulkBefore = try harness.db.count("SELECT count(*) FROM deliveries WHERE lane = 1")
        let liveID = try harness.db.delivery(request: live, partner: partner.id, user: "live-user", service: .apns)
        try harness.waitUntilBlocking("the realtime push sent") { harness.timesReceived(liveID) == 1 }
        let bulkLeft = try harness.db.count("SELECT count(*) FROM deliveries WHERE lane = 1")
        // 20 bulk sends of 200 ms at a time: 100 rows a second. The realtime row waited for a few of them at
        // most, so nearly all are still there (without the allowance the worker holds the whole backlog at
        // once and the realtime row queues behind it on the upstream connections).
        #expect(bulkBefore > 800 && bulkLeft > bulkBefore - 400,
                "the realtime push waited behind the backlog: \(bulkBefore) bulk rows before, \(bulkLeft) after")

        // And the bulk lane drains to the end: the allowance refills as sends complete.
        try harness.waitUntilBlocking("the bulk lane drained", timeout: .seconds(90)) { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: backfill).sent == 1_500)
    }

    @Test func theAllowanceIsReadFromTheEnvironmentAndChecked() throws {
        let credentials = TestCredentials.shared
        var environment = ["HERALD_DATABASE_URL": "postgresql://localhost/herald",
                           "HERALD_APNS_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_KEY_ID": "ABCDEFGHIJ",
                           "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPIC": "one.based.app"]
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
