import Foundation
import HeraldCore
import HeraldTestSupport
import Store
import Testing
import Worker

@testable import Simulator

/// What keeps delivery right when things go wrong around it: rows the database refuses to
/// record, sends slower than a lease, a database gone during a drain, and the real-service
/// defaults (topic per app, never `apns-expiration: 0`).
@Suite(.requiresDatabase) struct WorkerResilienceTests {
    static var workerBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-worker") }

    @Test func theTopicIsTheDevicesBundleIDAndARowWithoutExpiryIsStillStoredByAPNs() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        let request = try harness.db.request(partner: partner.id, deliveries: 2)
        try harness.db.user("own-app", apnsToken: WorkerHarness.apnsToken(0), bundleID: "com.partner.other")
        try harness.db.user("default-app", apnsToken: WorkerHarness.apnsToken(1))
        let own = try harness.db.delivery(request: request, partner: partner.id, user: "own-app", service: .apns)
        let plain = try harness.db.delivery(request: request, partner: partner.id, user: "default-app", service: .apns)
        let before = Int(Date().timeIntervalSince1970)
        try harness.startWorker()
        try await harness.waitUntil("both sent") { try harness.outstanding() == 0 }
        let after = Int(Date().timeIntervalSince1970.rounded(.up))

        let received = harness.simulator.received()
        let ownRecord = try #require(received.first { $0.header("apns-id") == own.uuidString.lowercased() })
        let plainRecord = try #require(received.first { $0.header("apns-id") == plain.uuidString.lowercased() })
        #expect(ownRecord.header("apns-topic") == "com.partner.other")
        #expect(plainRecord.header("apns-topic") == harness.credentials.apnsTopic)
        // No expiry on the row: APNs still stores it (28 days), never `0` (one attempt, nothing kept).
        let expiration = try #require(plainRecord.header("apns-expiration").flatMap { Int($0) })
        // Between the worker's start and the test's wake-up (which may come late on a busy machine).
        let storage = Int(APNsUpstream.longestStorage)
        #expect((before + storage...after + storage + 1).contains(expiration), "\(expiration) vs \(before)...\(after)")
    }

    @Test func aRowTheDatabaseRefusesToRecordIsIsolatedAndTheRestAreRecorded() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 12)
        let poisoned = queued.deliveries[5]
        // A lasting failure for one row's outcome only: recording it as sent raises, every time.
        try harness.db.connection.execute(
            """
            CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.id = '\(poisoned.uuidString.lowercased())' AND NEW.outcome = 'sent' THEN
                    RAISE EXCEPTION 'refused for the test';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_one BEFORE INSERT ON delivery_history FOR EACH ROW EXECUTE FUNCTION refuse_one();
            """)
        let worker = try harness.startWorker()
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
        for id in queued.deliveries where id != poisoned {
            #expect(try harness.db.outcome(of: id)?.outcome == "sent")
        }
        let atFault = try #require(try harness.db.outcome(of: poisoned))
        #expect(atFault.outcome == "failed")
        #expect(atFault.error == "record_failed_P0001")
        #expect(try harness.db.counts(of: queued.request) == (sent: 11, failed: 1))
        #expect(worker.metrics.render().contains("herald_worker_unrecordable_total 1"))
    }

    /// What a worker of the previous release meets between `heraldctl migrate` and its own replacement when the
    /// migration replaced the function that records outcomes (docs/architecture.md, *Schema changes across
    /// releases*): a passing failure, not a delivery's.
    @Test func outcomesWhoseFunctionIsGoneAreRecordedOnceItIsBackNotFailed() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 4)
        try harness.db.connection.execute(
            "ALTER FUNCTION herald_complete_deliveries RENAME TO herald_complete_deliveries_replaced")
        let worker = try harness.startWorker()
        try await harness.waitUntil("every delivery sent") {
            queued.deliveries.allSatisfy { harness.timesReceived($0) == 1 }
        }
        try await harness.waitUntil("the completer failed") {
            worker.metrics.render().contains("herald_worker_database_errors_total")
                && !worker.metrics.render().contains("herald_worker_database_errors_total 0\n")
        }
        #expect(try harness.db.count("SELECT count(*) FROM delivery_history") == 0)
        try harness.db.connection.execute(
            "ALTER FUNCTION herald_complete_deliveries_replaced RENAME TO herald_complete_deliveries")
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
        for id in queued.deliveries {
            #expect(try harness.db.outcome(of: id)?.outcome == "sent")
            #expect(harness.timesReceived(id) == 1)
        }
        #expect(worker.metrics.render().contains("herald_worker_unrecordable_total 0\n"))
    }

    @Test func aSendSlowerThanTheLeaseKeepsItsLeaseAndIsSentOnce() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 1)
        harness.simulator.setFault(SimulatorFault(times: 1, delayMs: 5000), token: WorkerHarness.apnsToken(0))
        let slow: (inout WorkerConfiguration) -> Void = { configuration in
            configuration.claimer.leaseSeconds = 2
            configuration.apns?.requestTimeout = .seconds(8)
        }
        let first = try harness.startWorker(slow)
        try harness.waitUntilBlocking("the first worker sends") { first.inFlight == 1 }
        // A second worker rescues every expired lease it sees; the first keeps renewing its own.
        let second = try harness.startWorker(slow)
        try await harness.waitUntil("recorded") { try harness.outstanding() == 0 }
        #expect(harness.timesReceived(queued.deliveries[0]) == 1)
        #expect(try harness.db.outcome(of: queued.deliveries[0])?.outcome == "sent")
        #expect(second.metrics.render().contains("herald_worker_rescued_total 0\n"))
        #expect(!first.metrics.render().contains("herald_worker_leases_extended_total 0\n"))
    }

    @Test func aDrainEndsByItsDeadlineWithTheDatabaseDown() async throws {
        let cluster = try PostgresCluster()
        let harness = try WorkerHarness(database: try QueueDatabase(serverURL: cluster.databaseURL))
        _ = try harness.queue(users: 10)
        for index in 0..<10 {
            harness.simulator.setFault(SimulatorFault(times: 1, delayMs: 2000), token: WorkerHarness.apnsToken(index))
        }
        let worker = try ChildProcess(
            executable: Self.workerBinary,
            environment: harness.processEnvironment(["HERALD_DRAIN_SECONDS": "4"]))
        try harness.waitUntilBlocking("sends in flight") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased'") == 10
        }
        try cluster.stop()
        let started = Date()
        worker.process.terminate()
        // The drain may take its 4 s; a worker stuck on the missing database would never exit.
        let exited = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            worker.process.waitUntilExit()
            exited.signal()
        }
        let inTime = exited.wait(timeout: .now() + 20) == .success
        if !inTime { kill(worker.process.processIdentifier, SIGKILL) }
        #expect(inTime, "the worker did not exit: \(worker.output)")
        #expect(worker.process.terminationStatus == 0, "\(worker.output)")
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(worker.output.contains("worker drained"))
    }
}
