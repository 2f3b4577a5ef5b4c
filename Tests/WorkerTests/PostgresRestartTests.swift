import Foundation
import HeraldTestSupport
import Postgres
import Synchronization
import Testing

@testable import Simulator

/// The primary is restarted (`pg_ctl restart`, fast and immediate) while two herald-worker processes
/// drain a backlog (docs/runbooks/postgres.md, "When Postgres is down"): each worker reports the outage on `/readyz` and
/// reconnects by itself, every row is delivered and recorded sent, and no lease is held twice. The
/// restart runs on a private pair, so the suite's cluster is never restarted.
@Suite(.requiresDatabase) struct PostgresRestartTests {
    @Test func aFastRestartUnderLoadLosesNothingAndSendsNothingTwice() async throws {
        try await drainAcrossRestart(immediate: false)
    }

    @Test func anImmediateRestartUnderLoadLosesNothingAndResendsOnlyLeasedRows() async throws {
        try await drainAcrossRestart(immediate: true)
    }

    private func drainAcrossRestart(immediate: Bool) async throws {
        let mode = immediate ? "immediate" : "fast"
        let pair = try PostgresFailoverPair()
        defer { pair.destroy() }
        let harness = try WorkerHarness(database: try QueueDatabase(serverURL: pair.databaseURL))
        let users = 300
        let queued = try harness.queue(users: users)
        // Slow answers and an in-flight limit keep the drain going for several seconds, so the restart falls in
        // the middle of it. Sends of 1 to 3 s, much longer than the moment between the leased count below and
        // the restart, keep what finishes in that moment (commits the restart may lose) well below that count;
        // their spread keeps the workers full rather than emptying and refilling together.
        for index in 0..<users {
            let fault = SimulatorFault(delayMs: 1000 + index % 5 * 500)
            harness.simulator.setFault(fault, token: WorkerHarness.apnsToken(index))
        }
        let ports = [TestEnvironment.freePort(), TestEnvironment.freePort()]
        let workers = try ports.map { port in
            try ChildProcess(
                executable: WorkerProcessTests.workerBinary,
                environment: harness.processEnvironment([
                    "HERALD_WORKER_METRICS_PORT": String(port), "HERALD_WORKER_MAX_IN_FLIGHT": "50",
                    "HERALD_BATCH_SIZE": "25", "HERALD_LOG_LEVEL": "warning",
                ]))
        }
        defer { workers.forEach { $0.stop() } }

        // Every /readyz answer of each worker, in order, from before the restart until the end.
        let answers = Mutex<[[Int]]>(Array(repeating: [], count: ports.count))
        let polling = Atomic<Bool>(true)
        let poller = Thread {
            // Every 10 ms until the test ends.
            try? waitFor("the test's end", timeout: .seconds(600), interval: .milliseconds(10)) {
                for (index, port) in ports.enumerated() {
                    let status = (try? TestHTTPClient.send(port: port, method: "GET", path: "/readyz"))?.status ?? 0
                    answers.withLock { $0[index].append(status) }
                }
                return !polling.load(ordering: .relaxed)
            }
        }
        poller.start()
        defer { polling.store(false, ordering: .relaxed) }

        try harness.waitUntilBlocking("both workers ready") {
            answers.withLock { $0.allSatisfy { $0.last == 200 } }
        }
        try harness.waitUntilBlocking("a fifth of the backlog recorded") {
            try harness.db.count("SELECT count(*) FROM delivery_history") >= users / 5
        }
        // The workers commit asynchronously (a lost claim or completion means a resend, docs/internals.md). This
        // synchronous commit makes every earlier one durable, so what the restart can make them send again is,
        // bar the last few milliseconds, what is leased now: the bound on duplicates.
        let leasedBefore = try harness.db.connection.transaction { connection in
            _ = try connection.query("SELECT txid_current()")
            return try connection.query("SELECT count(*) FROM deliveries WHERE state = 'leased'").first!.int(0)
        }
        let restartBegan = answers.withLock { $0.map(\.count) }
        try pair.restart(.primary, immediate: immediate)
        let restartEnded = answers.withLock { $0.map(\.count) }

        // Each worker is ready again by itself (checked below: it was not ready while the server was down).
        try harness.waitUntilBlocking("both workers ready again after the restart", timeout: .seconds(60)) {
            answers.withLock { answers in
                answers.indices.allSatisfy { answers[$0][restartEnded[$0]...].contains(200) }
            }
        }
        let check = PostgresPool(configuration: .init(url: harness.db.url, maxConnections: 1))
        defer { check.close() }
        try await harness.waitUntil("the backlog drained after the \(mode) restart", timeout: .seconds(120)) {
            try check.withConnection { try $0.query("SELECT count(*) FROM deliveries").first!.int(0) } == 0
        }
        polling.store(false, ordering: .relaxed)
        let seen = answers.withLock { $0 }
        for (index, worker) in workers.enumerated() {
            #expect(worker.process.isRunning, "worker \(index) exited: \(worker.output.suffix(3000))")
            let outage = seen[index][restartBegan[index]..<restartEnded[index]]
            #expect(outage.contains(503), "worker \(index) /readyz answered \(outage) while the server restarted")
            #expect(!seen[index].contains(500), "worker \(index) /readyz answered 500")
        }

        let sent = try check.withConnection { connection in
            try connection.query(
                """
                SELECT count(DISTINCT id) FROM delivery_history_deliveries WHERE request_id = $1 AND outcome = 'sent'
                """, [queued.request.id]
            ).first!.int(0)
        }
        #expect(sent == users, "\(sent) of \(users) recorded sent after the \(mode) restart")
        let received = harness.simulator.received().compactMap { $0.header("apns-id") }
        let expected = Set(queued.deliveries.map { $0.uuidString.lowercased() })
        #expect(
            expected.isSubset(of: Set(received)),
            "\(expected.subtracting(received).count) deliveries never reached the simulator")
        // A resend is only acceptable for a row whose result was unrecorded when the server went (at least
        // once). A fast shutdown ends with a checkpoint that keeps every commit, so it should cause none.
        let duplicates = received.count - Set(received).count
        if immediate {
            #expect(duplicates <= leasedBefore, "\(duplicates) duplicates, \(leasedBefore) rows leased at the restart")
        } else {
            #expect(duplicates == 0, "\(duplicates) duplicates, \(leasedBefore) rows leased at the restart")
        }
        print("PostgresRestartTests: -m \(mode): \(duplicates) duplicates, \(leasedBefore) leased at the restart")
    }
}
