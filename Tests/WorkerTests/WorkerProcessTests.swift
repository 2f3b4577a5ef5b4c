import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Store
import Testing
import Worker

@testable import Intake
@testable import Simulator

/// herald-worker as a process: a crash loses nothing, SIGTERM drains without duplicates, and the
/// whole path from the intake to the simulator with `Prefer: wait`.
@Suite(.requiresDatabase) struct WorkerProcessTests {
    static var workerBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-worker") }

    @Test func aKilledWorkersLeasedRowsAreDeliveredByAnotherAfterTheLease() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 20)
        // The first answer to each token is slow, so the first worker dies holding every lease.
        for index in 0..<20 {
            harness.simulator.setFault(SimulatorFault(times: 1, delayMs: 10_000), token: WorkerHarness.apnsToken(index))
        }
        let doomed = try ChildProcess(
            executable: Self.workerBinary,
            environment: harness.processEnvironment([
                "HERALD_LEASE_SECONDS": "2",
                "HERALD_UPSTREAM_TIMEOUT_MS": "1500",
            ]))
        try harness.waitUntilBlocking("the first worker holds every row") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased'") == 20
        }
        kill(doomed.process.processIdentifier, SIGKILL)
        doomed.process.waitUntilExit()
        // The slow answers served their purpose; the next worker's sends must not wait on them
        // (it keeps its leases while a send is slow, see the lease extender).
        harness.simulator.clearFaults()

        try harness.startWorker { $0.claimer.leaseSeconds = 2 }
        try await harness.waitUntil("everything delivered after the lease", timeout: .seconds(20)) {
            try harness.outstanding() == 0
        }
        #expect(try harness.db.counts(of: queued.request) == (sent: 20, failed: 0))
        for id in queued.deliveries {
            #expect(try harness.db.outcome(of: id)?.outcome == "sent")
        }
    }

    @Test func sigtermDrainsLeavesNothingLeasedAndSendsNothingTwice() async throws {
        let harness = try WorkerHarness()
        let queued = try harness.queue(users: 200)
        // Slow first answers keep sends in flight long enough for the test to see them, however
        // busy the machine; the drain deadline is longer still, so every send finishes.
        for index in 0..<200 {
            harness.simulator.setFault(SimulatorFault(times: 1, delayMs: 3000), token: WorkerHarness.apnsToken(index))
        }
        let worker = try ChildProcess(
            executable: Self.workerBinary,
            environment: harness.processEnvironment([
                "HERALD_BATCH_SIZE": "50",
                "HERALD_DRAIN_SECONDS": "15",
            ]))
        try harness.waitUntilBlocking("sends in flight") {
            try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased'") > 0
        }
        let started = Date()
        worker.process.terminate()
        worker.process.waitUntilExit()
        #expect(worker.process.terminationStatus == 0, "\(worker.output)")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE state = 'leased'") == 0)

        try harness.startWorker()
        try await harness.waitUntil("the rest delivered") { try harness.outstanding() == 0 }
        #expect(try harness.db.counts(of: queued.request) == (sent: 200, failed: 0))
        let accepted = harness.simulator.received().filter { $0.status == 200 }.compactMap { $0.header("apns-id") }
        #expect(accepted.count == 200)
        #expect(Set(accepted).count == 200)
    }

    @Test func theWorkerServesHealthReadinessAndMetrics() async throws {
        let harness = try WorkerHarness()
        let port = TestEnvironment.freePort()
        let worker = try ChildProcess(
            executable: Self.workerBinary,
            environment: harness.processEnvironment(["HERALD_WORKER_METRICS_PORT": "\(port)"]))
        defer { worker.stop() }
        try await harness.waitUntil("ready") {
            (try? TestHTTPClient.send(port: port, method: "GET", path: "/readyz"))?.status == 200
        }
        #expect(try TestHTTPClient.send(port: port, method: "GET", path: "/healthz").status == 200)
        let metrics = try TestHTTPClient.send(port: port, method: "GET", path: "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("herald_worker_deliveries_total"))
        // The queue gauges appear with the gauge service's first refresh, right after start.
        try await harness.waitUntil("the queue gauges") {
            (try? TestHTTPClient.send(port: port, method: "GET", path: "/metrics"))?.text
                .contains("herald_queue_due_deliveries{lane=\"realtime\"}") == true
        }
    }

    @Test func aMissingUpstreamConfigurationNamesTheVariable() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        environment.removeValue(forKey: "HERALD_APNS_KEY_FILE")
        environment.removeValue(forKey: "HERALD_FCM_CREDENTIALS_FILE")
        let result = try ChildProcess.run(Self.workerBinary, [], environment: environment)
        #expect(result.status == 2)
        #expect(result.output.contains("HERALD_APNS_KEY_FILE"))
    }

    @Test func preferWaitAnswersWithTheFinalCountsOnceTheWorkerDelivered() async throws {
        let harness = try WorkerHarness()
        let key = "mp_" + String(repeating: "5", count: 32)
        let partner = try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        try harness.db.user("alice", apnsToken: WorkerHarness.apnsToken(0), fcmToken: WorkerHarness.fcmToken(0))
        try harness.db.email("alice@example.com", user: "alice")
        // A long poll interval: only NOTIFY can make this fast.
        try harness.startWorker { $0.claimer.pollInterval = .seconds(30) }
        try await harness.waitUntil("the worker listens") {
            try DeliveryStore().listenerPIDs(on: harness.db.connection).count == 1
        }

        let (intake, port) = try Self.startIntake(databaseURL: harness.db.url)
        defer { intake.stop() }

        let started = Date()
        let response = try TestHTTPClient.json(
            port: port, method: "POST", path: "/api/partners/notifications/push", token: key,
            json: #"{"recipients":{"emails":["alice@example.com"]},"title":"Deposit","body":"Confirmed"}"#,
            headers: [("Prefer", "wait=10")])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers["preference-applied"] == "wait=10")
        #expect(response.text.contains(#""status":"completed""#))
        #expect(response.text.contains(#""sent":2"#))
        #expect(Date().timeIntervalSince(started) < 5)
        _ = partner
        let services = Set(harness.simulator.received().map(\.service))
        #expect(services == [.apns, .fcm])
    }

    @Test func preferWaitAboveThirtySecondsIsShortenedToThirty() async throws {
        let harness = try WorkerHarness()
        let key = "mp_" + String(repeating: "7", count: 32)
        try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        try harness.db.user("bob", apnsToken: WorkerHarness.apnsToken(0))
        try harness.db.email("bob@example.com", user: "bob")
        try harness.startWorker()
        let (intake, port) = try Self.startIntake(databaseURL: harness.db.url)
        defer { intake.stop() }
        let response = try TestHTTPClient.json(
            port: port, method: "POST", path: "/api/partners/notifications/push", token: key,
            json: #"{"recipients":{"emails":["bob@example.com"]},"title":"T"}"#, headers: [("Prefer", "wait=99")])
        #expect(response.status == 200, "\(response.text)")
        #expect(response.headers["preference-applied"] == "wait=30")
    }

    @Test func preferWaitRejectsANonNumericWait() async throws {
        let harness = try WorkerHarness()
        let key = "mp_" + String(repeating: "6", count: 32)
        try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        let (intake, port) = try Self.startIntake(databaseURL: harness.db.url)
        defer { intake.stop() }
        let response = try TestHTTPClient.json(
            port: port, method: "POST", path: "/api/partners/notifications/push", token: key,
            json: #"{"recipients":{"emails":["nobody@example.com"]},"title":"T"}"#, headers: [("Prefer", "wait=soon")])
        #expect(response.status == 400)
        #expect(response.text.contains(#""field":"Prefer""#))
    }

    /// An intake in this process on a free port, writing to `databaseURL`.
    static func startIntake(databaseURL: String) throws -> (IntakeServer, UInt16) {
        var configuration = IntakeConfiguration(
            databaseURL: databaseURL, adminToken: "test-admin-token-0123456789",
            hostToken: "test-host-token-0123456789", signingKeys: ["k1": Array(repeating: 7, count: 32)],
            signingKeyID: "k1")
        configuration.port = 0
        configuration.metricsPort = 0
        configuration.logLevel = .error
        let intake = try IntakeServer(configuration: configuration)
        return (intake, try intake.start())
    }
}
