import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// What a failover, a restart or a lost connection looks like to a caller: which errors answer 503
/// (`database_unavailable`, retried by the client with its Idempotency-Key), which drop the
/// connection that saw them, and which stay 500.
@Suite struct PostgresErrorClassificationTests {
    static let unavailable: [(PostgresError.Code, String?)] = [
        (.connectionFailed, nil), (.connectionLost, nil), (.commitOutcomeUnknown, nil), (.poolTimeout, nil),
        (.queryFailed, "57P01"), (.queryFailed, "57P02"), (.queryFailed, "57P03"), (.queryFailed, "25006"),
        (.queryFailed, "08006"), (.queryFailed, "08003"), (.queryFailed, "08000"), (.connectionLost, "57P01"),
        (.commitOutcomeUnknown, "08006"),
    ]

    @Test("connection loss, shutdown, start-up, a read-only server and an unknown COMMIT are unavailable: 503")
    func unavailableErrors() {
        for (code, state) in Self.unavailable {
            let error = PostgresError(code: code, sqlState: state)
            #expect(error.isUnavailable, "\(error)")
            #expect(error.isTransient, "\(error)")
            #expect(StoreErrors.heraldError(for: error) == .databaseUnavailable, "\(error)")
            #expect(StoreErrors.heraldError(for: error).retryAfter == 1)
        }
    }

    @Test("races and exhausted resources are retried by the client (503), but keep their connection")
    func transientErrors() {
        for state in ["40001", "40P01", "55P03", "53300", "53100", "58030"] {
            let error = PostgresError(code: .queryFailed, sqlState: state)
            #expect(!error.isUnavailable, "\(state)")
            #expect(error.isTransient, "\(state)")
            #expect(!error.discardsConnection, "\(state)")
            #expect(StoreErrors.heraldError(for: error) == .databaseUnavailable, "\(state)")
        }
    }

    @Test("a schema migrated under the running release is retried (503) on a new connection")
    func schemaChangedErrors() {
        // 42883 a function the migration replaced, 42P01 a table, 42703 a column, 42704 a type, 0A000 a prepared
        // statement whose result type changed ("cached plan must not change result type").
        for state in ["42883", "42P01", "42703", "42704", "0A000"] {
            let error = PostgresError(code: .queryFailed, sqlState: state)
            #expect(error.sqlStateClass == .schemaChanged, "\(state)")
            #expect(!error.isUnavailable, "\(state)")
            #expect(error.isTransient, "\(state)")
            #expect(error.discardsConnection, "\(state)")
            #expect(StoreErrors.heraldError(for: error) == .databaseUnavailable, "\(state)")
        }
    }

    @Test("every SQLSTATE falls in one class, by its code or its class prefix")
    func sqlStateClasses() {
        let expected: [(String, SQLStateClass)] = [
            ("08006", .unavailable), ("08001", .unavailable), ("57P01", .unavailable), ("57P02", .unavailable),
            ("57P03", .unavailable), ("25006", .unavailable), ("42883", .schemaChanged), ("0A000", .schemaChanged),
            ("40001", .contention), ("40P01", .contention), ("55P03", .contention), ("53300", .resources),
            ("58030", .resources), ("57014", .statement), ("25P02", .statement), ("42501", .statement),
            ("23505", .statement), ("P0001", .statement),
        ]
        for (state, kind) in expected {
            #expect(SQLStateClass(sqlState: state) == kind, "\(state)")
            #expect(SQLStateClass(sqlState: state).isTransient == (kind != .statement), "\(state)")
        }
        #expect(PostgresError(code: .connectionLost).sqlStateClass == nil)
    }

    @Test("a connection that saw a lost socket, a shutdown or a read-only server is not reused")
    func discardsConnection() {
        for (code, state) in Self.unavailable where code != .poolTimeout {
            #expect(PostgresError(code: code, sqlState: state).discardsConnection, "\(code) \(state ?? "-")")
        }
        // Waiting for a connection says nothing about the connections themselves.
        #expect(!PostgresError(code: .poolTimeout).discardsConnection)
    }

    @Test("errors about the statement stay 500 and keep the connection")
    func statementErrors() {
        for state in ["23505", "23503", "22P02", "P0001", "57014", "42601", "42P10", "XX000"] {
            let error = PostgresError(code: .queryFailed, sqlState: state)
            #expect(!error.isTransient, "\(state)")
            #expect(!error.discardsConnection, "\(state)")
            #expect(StoreErrors.heraldError(for: error) == .internalError, "\(state)")
        }
        let decoding = PostgresError(code: .decodingFailed, serverMessage: "bad row")
        #expect(StoreErrors.heraldError(for: decoding) == .internalError)
        #expect(!decoding.discardsConnection)
    }
}

/// The same rules against a real server: the pool drops the connection that saw the error, so the
/// next request gets a new one.
@Suite(.requiresDatabase) struct PostgresErrorConnectionTests {
    @Test("a read-only server (25006) is unavailable, and the pool opens a new connection for the next request")
    func readOnlyDropsTheConnection() throws {
        let pool = PostgresPool(
            configuration: .init(
                url: TestEnvironment.databaseURL, maxConnections: 1,
                validateAfterIdle: .seconds(3600)))
        defer { pool.close() }
        // What a connection to a standby, or to a demoted primary, answers to a write.
        let pid = try pool.withConnection { connection in
            try connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            return try connection.query("SELECT pg_backend_pid()").first!.int(0)
        }
        do {
            try pool.withConnection { try $0.query("CREATE TEMP TABLE failover_probe (id int)") }
            Issue.record("a write on a read-only session must fail")
        } catch let error as PostgresError {
            #expect(error.sqlState == "25006")
            #expect(error.isUnavailable)
            #expect(StoreErrors.heraldError(for: error) == .databaseUnavailable)
        }
        let next = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        #expect(next != pid)
        try pool.withConnection { try $0.query("CREATE TEMP TABLE failover_probe (id int)") }
    }

    @Test("a connection terminated by the server (57P01 or a closed socket) is unavailable and replaced at once")
    func terminatedDropsTheConnection() throws {
        let pool = PostgresPool(
            configuration: .init(
                url: TestEnvironment.databaseURL, maxConnections: 1,
                validateAfterIdle: .seconds(3600)))
        defer { pool.close() }
        let admin = try PostgresConnection(url: TestEnvironment.databaseURL)
        let pid = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        try admin.query("SELECT pg_terminate_backend($1)", [pid])
        try waitFor("the backend gone") {
            try admin.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [pid]).first!.int(0) == 0
        }
        // Not validated (it was idle for less than validateAfterIdle): the statement itself fails.
        do {
            _ = try pool.withTransaction { try $0.query("SELECT 1") }
            Issue.record("the terminated connection must fail")
        } catch let error as PostgresError {
            #expect(error.isUnavailable, "\(error)")
            #expect(StoreErrors.heraldError(for: error) == .databaseUnavailable)
        }
        let next = try pool.withConnection { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        #expect(next != pid)
    }
}
