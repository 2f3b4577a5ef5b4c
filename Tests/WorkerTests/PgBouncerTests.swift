import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Store
import Testing
import Worker

/// Herald through PgBouncer 1.18 in `pool_mode = transaction` (docs/operations.md, "Connection
/// poolers"): with HERALD_DB_PREPARED=0 every statement runs unnamed, so any server connection can
/// run any client's next transaction; without it, the first shared server connection fails.
@Suite(.requiresDatabase, .enabled(if: PgBouncer.unavailableReason == nil, "\(PgBouncer.unavailableReason ?? "")"))
struct PgBouncerTests {
    // A long connect timeout: on a loaded machine PgBouncer's first server login can take seconds.
    static let unnamed = PostgresConnectionOptions(
        applicationName: "herald-test", connectTimeout: .seconds(60), preparedStatements: false)

    @Test func unnamedStatementsFromSeveralClientsInterleaveOnTwoServerConnections() throws {
        let db = try QueueDatabase()
        let bouncer = try PgBouncer(poolSize: 2)
        let clients = try (0..<6).map { _ in
            try PostgresConnection(url: bouncer.url(database: db.name), options: Self.unnamed)
        }
        for round in 0..<20 {
            for (index, client) in clients.enumerated() {
                // A different text per client and round: prepared, each would be herald_1 on a shared server connection.
                let sum = try client.query("SELECT $1::int + \(index) + $2::int", [round, 1]).first?.int(0)
                #expect(sum == round + index + 1)
                let count = try client.transaction {
                    try $0.query("SELECT count(*) FROM tenants WHERE id = $1", ["t1"]).first?.int(0)
                }
                #expect(count == 1)
                let results = try client.pipeline([
                    ("SELECT $1::text", ["a"], true), ("SELECT $1::int * 2", [index], true),
                ])
                #expect(try results[1].first?.int(0) == index * 2)
                // PgBouncer re-applies a client's TimeZone on whichever server connection it gets.
                #expect(try client.query("SHOW TimeZone").first?.string(0) == "UTC")
            }
        }
    }

    @Test func namedPreparedStatementsFailOnASharedServerConnection() throws {
        let db = try QueueDatabase()
        let bouncer = try PgBouncer(poolSize: 1)
        let prepared = PostgresConnectionOptions(
            applicationName: "herald-test", connectTimeout: .seconds(60), preparedStatements: true)
        let first = try PostgresConnection(url: bouncer.url(database: db.name), options: prepared)
        let second = try PostgresConnection(url: bouncer.url(database: db.name), options: prepared)
        _ = try first.query("SELECT $1::int", [1])
        // Both clients name their first statement herald_1, on the one server connection.
        let error = #expect(throws: PostgresError.self) { try second.query("SELECT $1::int + 1", [1]) }
        #expect(error?.sqlState == "42P05")
    }

    @Test func heraldctlMigrateAndStatsWorkThroughPgBouncer() throws {
        let db = try QueueDatabase()
        let bouncer = try PgBouncer(poolSize: 1)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = bouncer.url(database: db.name)
        environment["HERALD_DB_PREPARED"] = "0"
        let heraldctl = TestEnvironment.binDirectory.appendingPathComponent("heraldctl")
        let migrate = try ChildProcess.run(heraldctl, ["migrate", "--json"], environment: environment)
        #expect(migrate.status == 0, "\(migrate.output)")
        let stats = try ChildProcess.run(heraldctl, ["stats", "--json"], environment: environment)
        #expect(stats.status == 0, "\(stats.output)")
        #expect(stats.output.contains(#""oldestDueSeconds""#))

        environment["HERALD_DB_PREPARED"] = "yes"
        let refused = try ChildProcess.run(heraldctl, ["stats"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.output.contains("HERALD_DB_PREPARED: must be 0 or 1"))
    }

    /// Both processes as deployed, configured only by their environment: HERALD_DB_PREPARED=0 and
    /// PgBouncer's address reach the intake through its own parsing, as they do the worker.
    @Test func anIntakeAndAWorkerProcessDeliverThroughPgBouncer() async throws {
        let harness = try WorkerHarness()
        let bouncer = try PgBouncer(poolSize: 2)
        let url = bouncer.url(database: harness.db.name)
        let key = "mp_" + String(repeating: "8", count: 32)
        try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        for index in 0..<5 {
            try harness.db.user(
                "user\(index)", apnsToken: WorkerHarness.apnsToken(index), fcmToken: WorkerHarness.fcmToken(index))
            try harness.db.email("user\(index)@example.com", user: "user\(index)")
        }
        let intakePort = TestEnvironment.freePort()
        let intakeEnvironment = [
            "HERALD_DATABASE_URL": url, "HERALD_DB_PREPARED": "0", "HERALD_INTAKE_PORT": String(intakePort),
            "HERALD_INTAKE_METRICS_PORT": String(TestEnvironment.freePort()),
            "HERALD_ADMIN_TOKEN": "test-admin-token-0123456789", "HERALD_HOST_TOKEN": "test-host-token-0123456789",
            "HERALD_SIGNING_KEYS": "k1:\(Data(repeating: 7, count: 32).base64EncodedString())",
            "HERALD_INTAKE_THREADS": "4", "HERALD_DB_POOL_SIZE": "4",
        ]
        let intake = try ChildProcess(executable: Self.intakeBinary, environment: intakeEnvironment)
        defer { intake.stop() }
        let worker = try ChildProcess(
            executable: WorkerProcessTests.workerBinary,
            environment: harness.processEnvironment([
                "HERALD_DATABASE_URL": url, "HERALD_DB_PREPARED": "0",
                "HERALD_WORKER_LISTEN": "0",
            ]))
        defer { worker.stop() }
        try harness.waitUntilBlocking("the intake is ready") {
            (try? TestHTTPClient.send(port: intakePort, method: "GET", path: "/readyz"))?.status == 200
        }
        for index in 0..<5 {
            let response = try TestHTTPClient.json(
                port: intakePort, method: "POST", path: "/api/partners/notifications/push", token: key,
                json: #"{"recipients":{"emails":["user\#(index)@example.com"]},"title":"Deposit","body":"Confirmed"}"#)
            #expect(response.status == 202, "\(response.text)\n\(intake.output.suffix(2000))")
        }
        try await harness.waitUntil("ten deliveries sent by polling") {
            harness.simulator.received().filter { $0.status == 200 }.count == 10
        }
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
        #expect(!intake.output.contains("\"level\":\"error\""), "\(intake.output)")
        #expect(!worker.output.contains("\"level\":\"error\""), "\(worker.output)")

        // The intake refuses a value it does not know, naming the variable, before it serves anything.
        var refusedEnvironment = intakeEnvironment
        refusedEnvironment["HERALD_DB_PREPARED"] = "yes"
        refusedEnvironment["HERALD_INTAKE_PORT"] = String(TestEnvironment.freePort())
        let refused = try ChildProcess(executable: Self.intakeBinary, environment: refusedEnvironment)
        await refused.waitForExit()
        #expect(refused.process.terminationStatus == 2)
        #expect(refused.output.contains("HERALD_DB_PREPARED: must be 0 or 1"), "\(refused.output)")
    }

    static var intakeBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-intake") }
}
