import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Store
import Testing
import Worker

/// Herald through PgBouncer 1.18 in `pool_mode = transaction` (docs/deployment.md, "Connection
/// poolers"): with HERALD_DB_PREPARED=0 every statement runs unnamed, so any server connection can
/// run any client's next transaction; without it, a connection finds the pooler by its backend key and
/// runs unnamed all the same.
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

    @Test func aConnectionAskedToPrepareFindsThePoolerAndRunsUnnamed() throws {
        let db = try QueueDatabase()
        let bouncer = try PgBouncer(poolSize: 1)
        let prepared = PostgresConnectionOptions(
            applicationName: "herald-test", connectTimeout: .seconds(60), preparedStatements: true)
        let first = try PostgresConnection(url: bouncer.url(database: db.name), options: prepared)
        let second = try PostgresConnection(url: bouncer.url(database: db.name), options: prepared)
        // The backend key PgBouncer hands out is its own: both connections see it and run unnamed, so two clients
        // that would each name their first statement herald_1 share the one server connection.
        for connection in [first, second] {
            #expect(connection.poolerDetected)
            #expect(!connection.preparedStatements)
        }
        for round in 0..<5 {
            #expect(try first.query("SELECT $1::int", [round]).first?.int(0) == round)
            #expect(try second.query("SELECT $1::int + 1", [round]).first?.int(0) == round + 1)
        }
        // Straight to the server, the key is the server process's: named statements as asked.
        let direct = try PostgresConnection(url: db.url, options: prepared)
        #expect(!direct.poolerDetected)
        #expect(direct.preparedStatements)
    }

    @Test func aLostPreparedStatementDiscardsTheConnectionAndMapsTo503() throws {
        let db = try QueueDatabase()
        let connection = try PostgresConnection(
            url: db.url, options: PostgresConnectionOptions(applicationName: "herald-test", preparedStatements: true))
        _ = try connection.query("SELECT $1::int", [1])
        // What a transaction pooler does to a client's named statement: the next server connection lacks it.
        try connection.execute("DEALLOCATE ALL")
        let error = #expect(throws: PostgresError.self) { try connection.query("SELECT $1::int", [2]) }
        #expect(error?.sqlState == "26000")
        #expect(error?.isPreparedStatementMismatch == true)
        #expect(!connection.isHealthy)
        let answer = StoreErrors.heraldError(for: error!)
        #expect(answer.status == 503)
        #expect(answer.code == "database_pooler")
        #expect(answer.retryAfter == 1)
        #expect(answer.message.contains("HERALD_DB_PREPARED=0"))
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
        let key = try Self.partnerAndUsers(harness, users: 5)
        let intakeEnvironment = Self.intakeEnvironment(
            url: bouncer.url(database: harness.db.name), ["HERALD_DB_PREPARED": "0"])
        let intake = try ChildProcess(executable: Self.intakeBinary, environment: intakeEnvironment)
        defer { intake.stop() }
        let worker = try ChildProcess(
            executable: WorkerProcessTests.workerBinary,
            environment: harness.processEnvironment([
                "HERALD_DATABASE_URL": bouncer.url(database: harness.db.name), "HERALD_DB_PREPARED": "0",
                "HERALD_WORKER_LISTEN": "0",
            ]))
        defer { worker.stop() }
        let intakePort = UInt16(intakeEnvironment["HERALD_INTAKE_PORT"]!)!
        try await Self.pushToEveryUser(harness, intakePort: intakePort, key: key, users: 5, intake: intake)
        #expect(!intake.output.contains("\"level\":\"error\""), "\(intake.output)")
        #expect(!worker.output.contains("\"level\":\"error\""), "\(worker.output)")
        // Told, nothing to detect: no warning, and /readyz says nothing of a pooler.
        #expect(!worker.output.contains("connection pooler"), "\(worker.output)")
        let ready = try TestHTTPClient.send(port: intakePort, method: "GET", path: "/readyz")
        #expect(!ready.text.contains("pooler"), "\(ready.text)")

        // The intake refuses a value it does not know, naming the variable, before it serves anything.
        var refusedEnvironment = intakeEnvironment
        refusedEnvironment["HERALD_DB_PREPARED"] = "yes"
        refusedEnvironment["HERALD_INTAKE_PORT"] = String(TestEnvironment.freePort())
        let refused = try ChildProcess(executable: Self.intakeBinary, environment: refusedEnvironment)
        await refused.waitForExit()
        #expect(refused.process.terminationStatus == 2)
        #expect(refused.output.contains("HERALD_DB_PREPARED: must be 0 or 1"), "\(refused.output)")
    }

    /// An operator who points Herald at PgBouncer in transaction mode and sets nothing else: both processes find
    /// the pooler on their first connection, run unnamed statements, the worker parks its listener and polls, and
    /// every push is delivered; the log and /readyz name the settings that say so.
    @Test func processesLeftAtTheirDefaultsFindThePoolerAndDeliverEverything() async throws {
        let harness = try WorkerHarness()
        let bouncer = try PgBouncer(poolSize: 2)
        let url = bouncer.url(database: harness.db.name)
        let users = 20
        let key = try Self.partnerAndUsers(harness, users: users)
        let intakeEnvironment = Self.intakeEnvironment(url: url)
        let intake = try ChildProcess(executable: Self.intakeBinary, environment: intakeEnvironment)
        defer { intake.stop() }
        let healthPort = TestEnvironment.freePort()
        let worker = try ChildProcess(
            executable: WorkerProcessTests.workerBinary,
            environment: harness.processEnvironment([
                "HERALD_DATABASE_URL": url, "HERALD_WORKER_METRICS_PORT": String(healthPort),
            ]))
        defer { worker.stop() }
        let intakePort = UInt16(intakeEnvironment["HERALD_INTAKE_PORT"]!)!
        try await Self.pushToEveryUser(harness, intakePort: intakePort, key: key, users: users, intake: intake)
        #expect(!intake.output.contains("\"level\":\"error\""), "\(intake.output)")
        #expect(!worker.output.contains("\"level\":\"error\""), "\(worker.output)")
        #expect(intake.output.contains("set HERALD_DB_PREPARED=0"), "\(intake.output)")
        #expect(worker.output.contains("set HERALD_WORKER_LISTEN=0"), "\(worker.output)")
        let ready = try TestHTTPClient.send(port: intakePort, method: "GET", path: "/readyz")
        #expect(ready.status == 200)
        #expect(ready.text.contains(#""pooler":"detected: statements run unnamed; set HERALD_DB_PREPARED=0"#))
        let workerReady = try TestHTTPClient.send(port: healthPort, method: "GET", path: "/readyz")
        #expect(workerReady.status == 200, "\(workerReady.text)")
        #expect(workerReady.text.contains("HERALD_DB_PREPARED=0"), "\(workerReady.text)")
    }

    /// A partner with `users` users, each with an iPhone, a Pixel and an email address; returns its key.
    private static func partnerAndUsers(_ harness: WorkerHarness, users: Int) throws -> String {
        let key = "mp_" + String(repeating: "8", count: 32)
        try harness.db.partner(keyHash: PartnerAPIKey.hash(key))
        for index in 0..<users {
            try harness.db.user(
                "user\(index)", apnsToken: WorkerHarness.apnsToken(index), fcmToken: WorkerHarness.fcmToken(index))
            try harness.db.email("user\(index)@example.com", user: "user\(index)")
        }
        return key
    }

    /// The intake's environment on `url` and free ports, with `extra`.
    private static func intakeEnvironment(url: String, _ extra: [String: String] = [:]) -> [String: String] {
        var environment = [
            "HERALD_DATABASE_URL": url, "HERALD_INTAKE_PORT": String(TestEnvironment.freePort()),
            "HERALD_INTAKE_METRICS_PORT": String(TestEnvironment.freePort()),
            "HERALD_ADMIN_TOKEN": "test-admin-token-0123456789", "HERALD_HOST_TOKEN": "test-host-token-0123456789",
            "HERALD_SIGNING_KEYS": "k1:\(Data(repeating: 7, count: 32).base64EncodedString())",
            "HERALD_INTAKE_THREADS": "4", "HERALD_DB_POOL_SIZE": "4",
        ]
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// One push to each user through the intake once it is ready (each 202), then waits for both devices of every
    /// user to be sent and every outcome recorded.
    private static func pushToEveryUser(
        _ harness: WorkerHarness, intakePort: UInt16, key: String, users: Int, intake: ChildProcess
    ) async throws {
        try harness.waitUntilBlocking("the intake is ready") {
            (try? TestHTTPClient.send(port: intakePort, method: "GET", path: "/readyz"))?.status == 200
        }
        for index in 0..<users {
            let response = try TestHTTPClient.json(
                port: intakePort, method: "POST", path: "/api/partners/notifications/push", token: key,
                json: #"{"recipients":{"emails":["user\#(index)@example.com"]},"title":"Deposit","body":"Confirmed"}"#)
            #expect(response.status == 202, "\(response.text)\n\(intake.output.suffix(2000))")
        }
        try await harness.waitUntil("every delivery sent") {
            harness.simulator.received().filter { $0.status == 200 }.count == 2 * users
        }
        try await harness.waitUntil("every outcome recorded") { try harness.outstanding() == 0 }
    }

    static var intakeBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-intake") }
}
