import Foundation
import HeraldCore
import HeraldTestSupport
import ServiceSupport
import Store
import Testing
import Worker

/// The autoscaling gauges (`herald_queue_due_deliveries{lane}`, `herald_queue_oldest_due_seconds{lane}`)
/// as an HPA's Prometheus scrapes them: a real herald-worker process, its /metrics, a real queue.
@Suite(.requiresDatabase) struct QueueGaugeTests {
    static var workerBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-worker") }

    /// The value of `name{lane="lane"}` in an exposition text, nil when absent.
    static func gauge(_ text: String, _ name: String, lane: String) -> Double? {
        let prefix = "\(name){lane=\"\(lane)\"} "
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func theWorkerExportsDueRowsAndTheOldestDueAgePerLane() async throws {
        let harness = try WorkerHarness()
        let partner = try harness.db.partner()
        try harness.db.user("gauge-user", apnsToken: WorkerHarness.apnsToken(0), fcmToken: WorkerHarness.fcmToken(0))
        let request = try harness.db.request(partner: partner.id, deliveries: 12)
        let queuedAt = Date()
        // FCM rows with a worker that has no FCM credentials: they stay due, so the figures hold still.
        for _ in 0..<3 {
            try harness.db.delivery(
                request: request, partner: partner.id, user: "gauge-user", service: .fcm, lane: 0,
                availableAt: Date().addingTimeInterval(-40))
        }
        for _ in 0..<5 {
            try harness.db.delivery(
                request: request, partner: partner.id, user: "gauge-user", service: .fcm, lane: 1,
                availableAt: Date().addingTimeInterval(-5))
        }
        // Scheduled for later: pending but not due, so not counted.
        try harness.db.delivery(
            request: request, partner: partner.id, user: "gauge-user", service: .fcm, lane: 0,
            availableAt: Date().addingTimeInterval(3600))

        let port = TestEnvironment.freePort()
        var environment = harness.processEnvironment([
            "HERALD_WORKER_METRICS_PORT": "\(port)",
            "HERALD_QUEUE_GAUGE_INTERVAL_MS": "200",
        ])
        environment.removeValue(forKey: "HERALD_FCM_CREDENTIALS_FILE")
        let worker = try ChildProcess(executable: Self.workerBinary, environment: environment)
        defer { worker.stop() }

        func metrics() -> String {
            (try? TestHTTPClient.send(port: port, method: "GET", path: "/metrics", timeoutSeconds: 5))?.text ?? ""
        }
        try await harness.waitUntil("the first gauge refresh") {
            Self.gauge(metrics(), "herald_queue_due_deliveries", lane: "bulk") == 5
        }
        let text = metrics()
        #expect(Self.gauge(text, "herald_queue_due_deliveries", lane: "realtime") == 3, "\(text)")
        let realtimeAge = try #require(Self.gauge(text, "herald_queue_oldest_due_seconds", lane: "realtime"))
        // At least the rows' 40 s, at most that plus the time since they were queued (a busy suite may
        // resume this test late).
        #expect(realtimeAge >= 39 && realtimeAge < 41 + Date().timeIntervalSince(queuedAt), "\(text)")
        let bulkAge = try #require(Self.gauge(text, "herald_queue_oldest_due_seconds", lane: "bulk"))
        #expect(bulkAge >= 4 && bulkAge < realtimeAge, "\(text)")
        #expect(text.contains("# TYPE herald_queue_due_deliveries gauge"))

        // New work shows within an interval or so; what leaves the queue leaves the gauge.
        for _ in 0..<4 {
            try harness.db.delivery(request: request, partner: partner.id, user: "gauge-user", service: .fcm, lane: 0)
        }
        try await harness.waitUntil("the realtime lane counts 7") {
            Self.gauge(metrics(), "herald_queue_due_deliveries", lane: "realtime") == 7
        }
        try harness.db.connection.execute("DELETE FROM deliveries WHERE lane = 1")
        try await harness.waitUntil("the bulk lane reads empty") {
            let now = metrics()
            return Self.gauge(now, "herald_queue_due_deliveries", lane: "bulk") == 0
                && Self.gauge(now, "herald_queue_oldest_due_seconds", lane: "bulk") == 0
        }
    }

    @Test func theIntervalIsReadAndValidated() throws {
        let credentials = TestCredentials.shared
        let base = [
            "HERALD_DATABASE_URL": "postgresql://localhost/herald",
            "HERALD_APNS_KEY_FILE": credentials.apnsKeyFile, "HERALD_APNS_KEY_ID": "ABCDEFGHIJ",
            "HERALD_APNS_TEAM_ID": "TEAM123456", "HERALD_APNS_TOPIC": "one.based.app",
        ]
        #expect(try WorkerConfiguration.fromEnvironment(base).queueGauge.interval == .seconds(15))
        var environment = base
        environment["HERALD_QUEUE_GAUGE_INTERVAL_MS"] = "2500"
        #expect(try WorkerConfiguration.fromEnvironment(environment).queueGauge.interval == .milliseconds(2500))
        for bad in ["0", "99", "600001", "soon"] {
            environment["HERALD_QUEUE_GAUGE_INTERVAL_MS"] = bad
            #expect(throws: ConfigurationError.self) { try WorkerConfiguration.fromEnvironment(environment) }
            do {
                _ = try WorkerConfiguration.fromEnvironment(environment)
            } catch {
                #expect(error.variable == "HERALD_QUEUE_GAUGE_INTERVAL_MS")
            }
        }
    }
}
