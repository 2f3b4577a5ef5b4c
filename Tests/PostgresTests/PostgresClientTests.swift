import Foundation
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import Postgres

/// The libpq client against the real test database.
@Suite("Postgres client", .requiresDatabase)
struct PostgresClientTests {
    let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 4))

    @Test("parameters of every supported type round-trip through the text format")
    func parameterRoundTrip() throws {
        let id = UUID()
        let date = Date(timeIntervalSince1970: 1_795_959_651.123456)
        let strings = ["plain", "quo\"te", "back\\slash", "comma,brace{}", "ünïcødé ☃", ""]
        let row = try #require(
            try pool.withConnection { connection in
                try connection.query(
                    "SELECT $1::text, $2::bigint, $3::bool, $4::uuid, $5::timestamptz, $6::text[], $7::float8, $8::text IS NULL",
                    ["it's", Int64(-9_007_199_254_740_993), true, id, date, strings, 0.25, nil as String?]
                ).first
            })
        #expect(try row.string(0) == "it's")
        #expect(try row.int(1) == -9_007_199_254_740_993)
        #expect(try row.bool(2))
        #expect(try row.uuid(3) == id)
        #expect(abs(try row.date(4).timeIntervalSince(date)) < 0.000_001)
        #expect(try row.double(6) == 0.25)
        #expect(try row.bool(7))
        let unnested = try pool.withConnection { connection in
            try connection.query("SELECT unnest($1::text[])", [strings]).rows.map { try $0.string(0) }
        }
        #expect(unnested == strings)
    }

    @Test("arrays of ids, times and strings bind as literals Postgres reads back element for element")
    func arrayParameters() throws {
        let ids = (0..<300).map { _ in UUID() }
        let times = [Date(timeIntervalSince1970: 1_795_959_651.5), Date(timeIntervalSince1970: 0)]
        #expect(
            [ids[0], ids[1]].postgresText
                == "{\"\(UUIDText.string(ids[0]))\",\"\(UUIDText.string(ids[1]))\"}")
        #expect(["a\"b", "c\\d", ""].postgresText == #"{"a\"b","c\\d",""}"#)
        #expect([String]().postgresText == "{}")
        let back = try pool.withConnection { connection in
            try connection.query("SELECT unnest($1::uuid[])", [ids]).rows.map { try $0.uuid(0) }
        }
        #expect(back == ids)
        let backTimes = try pool.withConnection { connection in
            try connection.query("SELECT unnest($1::timestamptz[])", [times]).rows.map { try $0.date(0) }
        }
        #expect(backTimes.count == 2 && zip(backTimes, times).allSatisfy { abs($0.timeIntervalSince($1)) < 0.000_001 })
    }

    @Test("arrays of every element type the binder writes directly read back as what was bound, NULL elements included")
    func typedArrayParameters() throws {
        let ids: [UUID?] = [UUID(), nil, UUID()]
        let numbers: [Int?] = [nil, 0, -42, Int.max]
        let counts: [Int] = [1, Int.min, 7]
        let times = [Date(timeIntervalSince1970: 1_795_959_651.25), Date(timeIntervalSince1970: -86_400.5)]
        let texts = ["a\"b", "c\\d", "", "NULL", "ünï ☃", "{,}"]
        // Through the protocol (the generic path): types without a loop of their own.
        let wide: [Int64] = [Int64.min, 3]
        let flags = [true, false]
        let optionalTexts: [String?] = ["x", nil]
        #expect(ids.postgresText == "{\"\(UUIDText.string(ids[0]!))\",NULL,\"\(UUIDText.string(ids[2]!))\"}")
        #expect(numbers.postgresText == #"{NULL,"0","-42","9223372036854775807"}"#)
        #expect(counts.postgresText == #"{"1","-9223372036854775808","7"}"#)
        #expect(texts.postgresText == #"{"a\"b","c\\d","","NULL","ünï ☃","{,}"}"#)
        #expect(wide.postgresText == #"{"-9223372036854775808","3"}"#)
        #expect(optionalTexts.postgresText == #"{"x",NULL}"#)
        #expect([UUID?]().postgresText == "{}" && [Int?]().postgresText == "{}")
        let row = try #require(
            try pool.withConnection { connection in
                try connection.query(
                    """
                    SELECT $1::uuid[] = $2::uuid[], $3::bigint[] IS NOT DISTINCT FROM ARRAY[NULL, 0, -42, 9223372036854775807]::bigint[],
                           $4::bigint[] = ARRAY[1, -9223372036854775808, 7]::bigint[], $5::timestamptz[], $6::text[] = $7::text[],
                           $8::bigint[] = ARRAY[-9223372036854775808, 3]::bigint[], $9::bool[] = ARRAY[true, false],
                           $10::text[] IS NOT DISTINCT FROM ARRAY['x', NULL]
                    """,
                    [
                        ids, "{\(UUIDText.string(ids[0]!)),NULL,\(UUIDText.string(ids[2]!))}", numbers, counts,
                        times, texts, "{\"a\\\"b\",\"c\\\\d\",\"\",\"NULL\",\"ünï ☃\",\"{,}\"}", wide, flags,
                        optionalTexts,
                    ]
                ).first
            })
        #expect(try row.bool(0))
        #expect(try row.bool(1))
        #expect(try row.bool(2))
        #expect(try row.string(3) == "{\"2026-11-29 13:40:51.25+00\",\"1969-12-30 23:59:59.5+00\"}")
        #expect(try row.bool(4))
        #expect(try row.bool(5))
        #expect(try row.bool(6))
        #expect(try row.bool(7))
        let unnested = try pool.withConnection { connection in
            try connection.query("SELECT unnest($1::text[])", [texts]).rows.map { try $0.string(0) }
        }
        #expect(unnested == texts)
    }

    @Test(
        "parameters share one buffer: NULLs between values, a statement after a huge one, and a pipeline's statements keep their own values"
    )
    func parameterBuffer() throws {
        let huge = String(repeating: "x", count: 5 << 20)
        try pool.withConnection { connection in
            let row = try #require(
                try connection.query(
                    "SELECT $1::text IS NULL, $2::text, $3::int IS NULL, $4::uuid IS NULL, $5::text",
                    [nil as String?, "second", nil as Int?, nil as UUID?, "fifth"]
                ).first)
            #expect(
                try row.bool(0) && row.string(1) == "second" && row.bool(2) && row.bool(3) && row.string(4) == "fifth")
            #expect(try connection.query("SELECT length($1::text)", [huge]).first!.int(0) == 5 << 20)
            // Shorter values after longer ones: no byte of the earlier statement's text may show.
            #expect(try connection.query("SELECT $1::text || '|' || $2::text", ["ab", "c"]).first!.string(0) == "ab|c")
            #expect(try connection.query("SELECT $1::text", [""]).first!.string(0) == "")
            let results = try connection.pipeline([
                ("SELECT $1::text", [String(repeating: "long", count: 1000)], true),
                ("SELECT $1::text, $2::text IS NULL", ["short", nil as String?], true),
                ("SELECT $1::uuid[]", [[UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))]], true),
            ])
            #expect(try results[0].first!.string(0) == String(repeating: "long", count: 1000))
            #expect(try results[1].first!.string(0) == "short" && results[1].first!.bool(1))
            #expect(try results[2].first!.string(0) == "{01020304-0506-0708-090a-0b0c0d0e0f10}")
        }
    }

    @Test("the binder writes each value's bytes with appendPostgresText, not through a String per value")
    func bindsWithoutStrings() throws {
        let value = WrittenOnly()
        let row = try #require(
            try pool.withConnection { connection in
                try connection.query("SELECT $1::text, $2::text[]", [value, [value, value]]).first
            })
        #expect(try row.string(0) == "written")
        #expect(try row.string(1) == #"{written,written}"#)
        #expect(WrittenOnly.stringsMade.load(ordering: .relaxed) == 0)
    }

    @Test("a failed statement reports its SQLSTATE, and the description never includes the server message")
    func errors() throws {
        let table = "t_" + UUID().uuidString.prefix(8).lowercased()
        try pool.withConnection { try $0.execute("CREATE TABLE \(table) (k text PRIMARY KEY)") }
        defer { _ = try? pool.withConnection { try $0.execute("DROP TABLE \(table)") } }
        try pool.withConnection { _ = try $0.query("INSERT INTO \(table) VALUES ($1)", ["secret@example.com"]) }
        do {
            try pool.withConnection { _ = try $0.query("INSERT INTO \(table) VALUES ($1)", ["secret@example.com"]) }
            Issue.record("a duplicate key must fail")
        } catch let error as PostgresError {
            #expect(error.code == .queryFailed)
            #expect(error.isUniqueViolation)
            #expect(error.sqlState == "23505")
            #expect(!error.isUnavailable)
            #expect(error.serverMessage.contains("duplicate key"))
            #expect(!String(describing: error).contains("secret@example.com"))
            #expect(!"\(error)".contains("duplicate key"))
        }
        // The connection is still usable after the error.
        #expect(try pool.withConnection { try $0.query("SELECT 1").first!.int(0) } == 1)
    }

    @Test("a transaction commits when its body returns and rolls back when it throws")
    func transactions() throws {
        let table = "t_" + UUID().uuidString.prefix(8).lowercased()
        try pool.withConnection { try $0.execute("CREATE TABLE \(table) (n int)") }
        defer { _ = try? pool.withConnection { try $0.execute("DROP TABLE \(table)") } }
        try pool.withTransaction { _ = try $0.query("INSERT INTO \(table) VALUES ($1)", [1]) }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try pool.withTransaction { connection in
                _ = try connection.query("INSERT INTO \(table) VALUES ($1)", [2])
                throw Abort()
            }
        }
        let values = try pool.withConnection {
            try $0.query("SELECT n FROM \(table) ORDER BY n").rows.map { try $0.int(0) }
        }
        #expect(values == [1])
        // A connection returned inside a failed transaction would poison the pool; it must come back idle.
        #expect(try pool.withConnection { $0.isIdle })
    }

    /// Returns once a session waits for a lock in a statement on `table` (the deadlock test's holder).
    func waitForLockWaiter(on table: String) throws {
        try waitFor("the holder waiting for row 2", timeout: .seconds(30), interval: .milliseconds(10)) {
            try pool.withConnection {
                try $0.query(
                    """
                    SELECT count(*) AS waiting FROM pg_stat_activity
                     WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()
                    """, [table]
                ).rows[0].int("waiting")
            } > 0
        }
    }

    @Test("a transaction Postgres aborts as a deadlock's victim runs again and commits; other errors are not retried")
    func deadlockRetry() throws {
        let table = "d_" + UUID().uuidString.prefix(8).lowercased()
        _ = try pool.withConnection {
            try $0.execute(
                "CREATE TABLE \(table) (id int PRIMARY KEY, n int); INSERT INTO \(table) VALUES (1, 0), (2, 0)")
        }
        defer { _ = try? pool.withConnection { try $0.execute("DROP TABLE \(table)") } }
        let holderLocked = DispatchSemaphore(value: 0), victimLocked = DispatchSemaphore(value: 0)
        let holderDone = DispatchSemaphore(value: 0)
        // The holder locks row 1, then (once the victim holds row 2) waits for row 2. It checks for a
        // deadlock only after 20 s; the victim after 1 s (time for the holder to start waiting), so the
        // victim is the one aborted.
        Thread.detachNewThread { [pool] in
            _ = try? pool.withTransaction { connection in
                try connection.execute("SET LOCAL deadlock_timeout = '20s'")
                _ = try connection.query("UPDATE \(table) SET n = n + 1 WHERE id = 1")
                holderLocked.signal()
                victimLocked.wait()
                _ = try connection.query("UPDATE \(table) SET n = n + 1 WHERE id = 2")
            }
            holderDone.signal()
        }
        holderLocked.wait()
        var attempts = 0
        try retryingDeadlocks {
            attempts += 1
            // The retry runs once the holder has committed: on a busy machine it could otherwise lock row 2 again
            // before the woken holder does, and be the victim of a second deadlock.
            if attempts == 2 { holderDone.wait() }
            try pool.withTransaction { connection in
                try connection.execute("SET LOCAL deadlock_timeout = '1s'")
                _ = try connection.query("UPDATE \(table) SET n = n + 10 WHERE id = 2")
                if attempts == 1 {
                    victimLocked.signal()
                    // The victim waits for row 1 only once the holder waits for row 2, so its deadlock check (after
                    // 1 s) finds the cycle rather than a holder that has not asked yet.
                    try waitForLockWaiter(on: table)
                }
                _ = try connection.query("UPDATE \(table) SET n = n + 10 WHERE id = 1")
            }
        }
        if attempts < 2 { holderDone.wait() }
        #expect(attempts == 2)
        let values = try pool.withConnection {
            try $0.query("SELECT n FROM \(table) ORDER BY id").rows.map { try $0.int(0) }
        }
        #expect(values == [11, 11])
        var failures = 0
        #expect(throws: PostgresError.self) {
            try retryingDeadlocks {
                failures += 1
                _ = try pool.withConnection { try $0.query("INSERT INTO \(table) VALUES (1, 0)") }
            }
        }
        #expect(failures == 1)
    }

    @Test("statements are prepared once per connection and reused")
    func preparedOnce() throws {
        try pool.withConnection { connection in
            for value in 0..<5 { _ = try connection.query("SELECT $1::int + 1", [value]) }
            let prepared = try connection.query(
                "SELECT count(*) FROM pg_prepared_statements WHERE statement = 'SELECT $1::int + 1'"
            ).first!.int(0)
            #expect(prepared == 1)
        }
    }

    @Test("a pipeline runs several statements in one round trip, as one transaction")
    func pipeline() throws {
        let table = "t_" + UUID().uuidString.prefix(8).lowercased()
        try pool.withConnection { try $0.execute("CREATE TABLE \(table) (n int PRIMARY KEY)") }
        defer { _ = try? pool.withConnection { try $0.execute("DROP TABLE \(table)") } }
        try pool.withConnection { connection in
            let results = try connection.pipeline([
                ("INSERT INTO \(table) VALUES ($1)", [1], true),
                ("SELECT $1::int * 2", [21], true),
                ("SELECT count(*) FROM \(table) WHERE n = $1", [1], true),
            ])
            #expect(results.count == 3)
            #expect(try results[1].first!.int(0) == 42)
            #expect(try results[2].first!.int(0) == 1)

            // The second statement fails: the third is skipped and the first is rolled back.
            #expect(throws: PostgresError.self) {
                _ = try connection.pipeline([
                    ("INSERT INTO \(table) VALUES ($1)", [2], true),
                    ("INSERT INTO \(table) VALUES ($1)", [1], true),
                    ("INSERT INTO \(table) VALUES ($1)", [3], true),
                ])
            }
            let values = try connection.query("SELECT n FROM \(table) ORDER BY n").rows.map { try $0.int(0) }
            #expect(values == [1])
            #expect(connection.isIdle)
        }
    }

    @Test("the pool bounds connections and times out waiters")
    func poolBounds() throws {
        let small = PostgresPool(
            configuration: .init(
                url: TestEnvironment.databaseURL, maxConnections: 1,
                acquireTimeout: .milliseconds(200)))
        defer { small.close() }
        let started = Date()
        try small.withConnection { _ in
            #expect(throws: PostgresError.self) { try small.withConnection { _ in } }
        }
        #expect(Date().timeIntervalSince(started) >= 0.2)
        let concurrent = runInParallel(8) { _ in
            (try? small.withConnection { connection -> Int in
                _ = try connection.query("SELECT pg_sleep(0.01)")
                return 1
            }) ?? 0
        }
        #expect(concurrent.reduce(0, +) == 8)
    }

    @Test("an unreachable server is reported as unavailable")
    func unreachable() throws {
        let nowhere = PostgresPool(
            configuration: .init(
                url: "postgresql://postgres@/herald?host=/nonexistent-socket-dir",
                maxConnections: 1))
        do {
            try nowhere.withConnection { _ in }
            Issue.record("connecting must fail")
        } catch let error as PostgresError {
            #expect(error.code == .connectionFailed)
            #expect(error.isUnavailable)
        }
    }

    @Test("a pooled connection killed by the server is replaced, not handed out broken")
    func recoversFromTerminatedConnection() throws {
        // Validated before every reuse (no idle time to wait out).
        let single = PostgresPool(
            configuration: .init(
                url: TestEnvironment.databaseURL, maxConnections: 1,
                validateAfterIdle: .zero))
        defer { single.close() }
        let pid = try single.withConnection { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        try pool.withConnection { _ = try $0.query("SELECT pg_terminate_backend($1)", [pid]) }
        try waitFor("the backend gone") {
            try pool.withConnection { try $0.query("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [pid]) }
                .first!.int(0) == 0
        }
        let newPID = try single.withConnection { try $0.query("SELECT pg_backend_pid()").first!.int(0) }
        #expect(newPID != pid)
    }
}

@Suite struct PostgresUUIDTests {
    @Test func roundTripsAndMatchesFoundation() {
        for _ in 0..<1000 {
            let uuid = UUID()
            let text = UUIDText.string(uuid)
            #expect(text == uuid.uuidString.lowercased())
            #expect(PostgresUUID.parse(text) == uuid)
            #expect(PostgresUUID.parse(uuid.uuidString) == uuid)
        }
    }

    @Test(arguments: [
        "", "not-a-uuid", "0192f3a4-0000-7000-8000-00000000000", "0192f3a4-0000-7000-8000-0000000000001",
        "0192f3a4x0000-7000-8000-000000000001", "0192f3a4-0000-7000-8000-00000000000g",
    ])
    func refusesMalformedText(_ text: String) {
        #expect(PostgresUUID.parse(text) == nil)
    }
}

/// Every connection is bounded against a database that stops answering (PostgresConnectionOptions).
@Suite(.requiresDatabase) struct ConnectionBoundsTests {
    @Test func aStatementPastTheTimeoutIsCancelled() throws {
        let connection = try PostgresConnection(
            url: TestEnvironment.databaseURL,
            options: PostgresConnectionOptions(statementTimeout: .milliseconds(200)))
        #expect(throws: PostgresError.self) { try connection.execute("SELECT pg_sleep(2)") }
        do {
            try connection.execute("SELECT pg_sleep(2)")
        } catch let error as PostgresError {
            #expect(error.sqlState == "57014")
            #expect(!error.isTransient)
        }
        // The connection stays usable after a cancelled statement.
        #expect(try connection.query("SELECT 1").first?.int(0) == 1)
    }

    @Test func keepalivesAndTheTCPUserTimeoutAreSetUnlessTheURLSaysOtherwise() throws {
        let connection = try PostgresConnection(url: TestEnvironment.databaseURL)
        #expect(connection.connectionSetting("keepalives") == "1")
        #expect(connection.connectionSetting("keepalives_idle") == "10")
        #expect(connection.connectionSetting("tcp_user_timeout") == "30000")
        #expect(connection.connectionSetting("connect_timeout") == "5")
        #expect(try connection.query("SHOW statement_timeout").first?.string(0) == "30s")

        let separator = TestEnvironment.databaseURL.contains("?") ? "&" : "?"
        let own = try PostgresConnection(url: TestEnvironment.databaseURL + separator + "keepalives_idle=42")
        #expect(own.connectionSetting("keepalives_idle") == "42")
    }
}

/// A parameter that counts the Strings made of it: the binder and Array's literal must use its bytes.
private struct WrittenOnly: PostgresEncodable {
    static let stringsMade = Atomic<Int>(0)
    var postgresText: String {
        Self.stringsMade.add(1, ordering: .relaxed)
        return "written"
    }
    func appendPostgresText(to out: inout [UInt8]) { out.append(contentsOf: "written".utf8) }
    func appendQuotedArrayElement(to out: inout [UInt8]) { out.append(contentsOf: #""written""#.utf8) }
}

/// The server's notices go where the process routes them (PostgresNotices), not to stderr: a warning
/// raised by a statement, and the FATAL a terminated connection receives before it closes.
@Suite("Postgres notices", .requiresDatabase, .serialized)
struct PostgresNoticeTests {
    @Test("a warning and a terminated connection's FATAL reach the route, with severity and SQLSTATE")
    func noticesReachTheRoute() throws {
        let seen = Mutex<[PostgresNotices.Notice]>([])
        PostgresNotices.route { notice in seen.withLock { $0.append(notice) } }
        defer { PostgresNotices.route(nil) }
        let connection = try PostgresConnection(url: TestEnvironment.databaseURL)
        try connection.query("DO $$ BEGIN RAISE WARNING 'notice-route-check'; END $$")
        #expect(
            seen.withLock { $0 }.contains(
                PostgresNotices.Notice(
                    severity: "WARNING", sqlState: "01000",
                    message: "notice-route-check")))
        let pid = try #require(try connection.query("SELECT pg_backend_pid()").first?.int(0))
        let other = try PostgresConnection(url: TestEnvironment.databaseURL)
        try other.query("SELECT pg_terminate_backend($1::int)", [pid])
        // An idle connection that reads its socket (a listener waiting for notifications) meets the FATAL
        // the server sent before closing it; libpq hands it over as a notice.
        _ = try? connection.waitForNotifications(timeout: .seconds(2))
        #expect(seen.withLock { $0 }.contains { $0.severity == "FATAL" && $0.sqlState == "57P01" })
    }
}
