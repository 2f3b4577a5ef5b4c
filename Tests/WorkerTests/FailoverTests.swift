import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Synchronization
import Testing

/// The primary is killed mid-load and its synchronous standby promoted (docs/runbooks/postgres.md,
/// "Without Patroni"): an intake process and a worker process on the multi-host URL answer 503 during the
/// switch and never 500, a partner retrying with its Idempotency-Key gets every push accepted, and
/// every accepted push is delivered.
@Suite(.requiresDatabase) struct FailoverTests {
    static let adminToken = "failover-admin-token-0123456789"

    @Test func killingThePrimaryAndPromotingTheStandbyLosesNoPushAndAnswersNo500() async throws {
        let pair = try PostgresFailoverPair()
        defer { pair.destroy() }
        let harness = try WorkerHarness(database: try QueueDatabase(serverURL: pair.databaseURL))
        let users = 4
        for index in 0..<users {
            try harness.db.user("user-\(index)", apnsToken: WorkerHarness.apnsToken(index))
            try harness.db.email("user-\(index)@example.com", user: "user-\(index)")
        }
        let intakePort = TestEnvironment.freePort()
        let intake = try ChildProcess(
            executable: TestEnvironment.binDirectory.appendingPathComponent("herald-intake"),
            environment: [
                "HERALD_DATABASE_URL": harness.db.url, "HERALD_INTAKE_PORT": String(intakePort),
                "HERALD_INTAKE_METRICS_PORT": String(TestEnvironment.freePort()),
                "HERALD_ADMIN_TOKEN": Self.adminToken, "HERALD_HOST_TOKEN": "failover-host-token-0123456789",
                "HERALD_SIGNING_KEYS": "k1:\(Data(repeating: 7, count: 32).base64EncodedString())",
                "HERALD_INTAKE_THREADS": "8", "HERALD_DB_POOL_SIZE": "4",
            ])
        defer { intake.stop() }
        let workerPort = TestEnvironment.freePort()
        let worker = try ChildProcess(
            executable: WorkerResilienceTests.workerBinary,
            environment: harness.processEnvironment(["HERALD_WORKER_METRICS_PORT": String(workerPort)]))
        defer { worker.stop() }
        try harness.waitUntilBlocking("the intake and the worker are ready") {
            (try? TestHTTPClient.send(port: intakePort, method: "GET", path: "/readyz"))?.status == 200
                && (try? TestHTTPClient.send(port: workerPort, method: "GET", path: "/readyz"))?.status == 200
        }
        let created = try TestHTTPClient.json(
            port: intakePort, method: "POST", path: "/api/admin/mini-app-partners", token: Self.adminToken,
            json:
                #"{"miniAppId":"app.failover","displayName":"Failover","tenantId":"t1","rateLimitPerMinute":100000,"rateLimitPerDay":1000000}"#
        )
        let key = try #require(try JSONParser.parse(created.body)["apiKey"]?.stringValue, "\(created.text)")

        // The partner: pushes one after another, each retried with its key until it gets an answer below 500
        // other than 503 (a dropped connection is retried too); every status seen is counted.
        let pushes = 120
        let statuses = Mutex<[Int: Int]>([:])
        let accepted = Mutex<Set<String>>([])
        let sent = Atomic<Int>(0)
        let sender = Thread {
            for index in 0..<pushes {
                let body =
                    #"{"recipients":{"emails":["user-\#(index % users)@example.com"],"wallets":[]},"title":"Deposit","body":"n\#(index)","deepLink":"basedapp://miniapp/app.failover/d","data":{}}"#
                // A client that retries (same Idempotency-Key) while there is no answer or a 503.
                try? waitFor("push \(index) answered", timeout: .seconds(60), interval: .milliseconds(50)) {
                    let response = try? TestHTTPClient.json(
                        port: intakePort, method: "POST", path: "/api/partners/notifications/push", token: key,
                        json: body,
                        headers: [("Idempotency-Key", "failover-\(index)")])
                    guard let response else { return false }
                    statuses.withLock { $0[response.status, default: 0] += 1 }
                    if response.status == 503 { return false }
                    if (200..<300).contains(response.status),
                        let id = try? JSONParser.parse(response.body)["requestId"]?.stringValue
                    {
                        accepted.withLock { _ = $0.insert(id) }
                    }
                    return true
                }
                sent.add(1, ordering: .relaxed)
                // A paced stream (a load generator's rate, not a wait): the failover lands in the middle of it with few
                // sends in flight, whose outcomes a dying primary may lose (the duplicates bound below).
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        sender.start()
        try harness.waitUntilBlocking("a third of the pushes sent") { sent.load(ordering: .relaxed) >= pushes / 3 }
        try pair.kill(.primary)
        try harness.waitUntilBlocking("the worker reports the database unreachable") {
            (try? TestHTTPClient.send(port: workerPort, method: "GET", path: "/readyz"))?.status == 503
        }
        try pair.promote(.standby)
        try harness.waitUntilBlocking("every push answered", timeout: .seconds(90)) {
            sent.load(ordering: .relaxed) == pushes
        }
        try harness.waitUntilBlocking("the worker is ready again") {
            (try? TestHTTPClient.send(port: workerPort, method: "GET", path: "/readyz"))?.status == 200
        }

        let seen = statuses.withLock { $0 }
        #expect(seen[500] == nil, "statuses: \(seen)\n\(intake.output.suffix(3000))")
        // At least one 503: the partner really pushed through the switch.
        #expect(seen[503, default: 0] >= 1, "no 503 seen, the switch was not exercised; statuses: \(seen)")
        #expect(seen.keys.allSatisfy { $0 == 202 || $0 == 200 || $0 == 503 }, "statuses: \(seen)")
        let ids = accepted.withLock { $0 }
        #expect(ids.count == pushes, "accepted \(ids.count) of \(pushes); statuses \(seen)")

        // Every accepted request delivered: nothing left queued, one history row per request, each sent.
        let check = PostgresPool(configuration: .init(url: harness.db.url, maxConnections: 1))
        defer { check.close() }
        try await harness.waitUntil("every delivery recorded", timeout: .seconds(60)) {
            try check.withConnection { try $0.query("SELECT count(*) FROM deliveries").first!.int(0) } == 0
        }
        let sentRequests = try check.withConnection { connection in
            try connection.query(
                "SELECT count(DISTINCT request_id) FROM delivery_history_deliveries WHERE outcome = 'sent'"
            )
            .first!.int(0)
        }
        #expect(sentRequests == pushes)
        let received = harness.simulator.received().compactMap { $0.header("apns-id") }
        let duplicates = received.count - Set(received).count
        #expect(Set(received).count == pushes)
        // At least once: a send whose outcome was being recorded when the primary died may go again.
        #expect(duplicates <= 10, "\(duplicates) duplicates")
    }
}
