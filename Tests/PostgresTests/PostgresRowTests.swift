import Foundation
import HeraldTestSupport
import Postgres
import Testing

/// Rows read in place from libpq's result (PostgresRow.swift): every type the project reads, NULLs,
/// empty and non-ASCII text, malformed values, and results that outlive their connection.
@Suite("Postgres rows", .requiresDatabase)
struct PostgresRowTests {
    let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    func row(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> PostgresRow {
        try #require(try pool.withConnection { try $0.query(sql, parameters).first })
    }

    @Test("text: NULL, empty, non-ASCII, long, and embedded quotes come back as they went in")
    func text() throws {
        let long = String(repeating: "ab☃", count: 5_000)
        let row = try row(
            "SELECT NULL::text, ''::text, $1::text, $2::text, 'it''s'::text, $3::text",
            ["ünïcødé ☃ 日本語 🚀", long, "a\tb\nc\\d"])
        #expect(row.count == 6)
        #expect(row[0] == nil)
        #expect(row.optionalString(0) == nil)
        #expect(row.isNull(0))
        #expect(throws: PostgresError.self) { try row.string(0) }
        #expect(try row.string(1) == "")
        #expect(!row.isNull(1))
        #expect(row.optionalString(1) == "")
        #expect(try row.string(2) == "ünïcødé ☃ 日本語 🚀")
        #expect(try row.string(3) == long)
        #expect(try row.string(4) == "it's")
        #expect(try row.string(5) == "a\tb\nc\\d")
        #expect(row.values == [nil, "", "ünïcødé ☃ 日本語 🚀", long, "it's", "a\tb\nc\\d"])
    }

    @Test("bytea: every byte value, empty, and arrays of it round-trip; NULL and text that is no bytea refused")
    func bytea() throws {
        let all = (0...255).map { UInt8($0) } + (0...255).reversed().map { UInt8($0) }
        let row = try row(
            "SELECT $1::bytea, $2::bytea, length($1::bytea), ($3::bytea[])[2], NULL::bytea, 'plain'::text",
            [PostgresBytea(all), PostgresBytea([]), [PostgresBytea([1, 2]), PostgresBytea([0x5c, 0x22, 0])]])
        #expect(try row.bytea(0) == all)
        #expect(try row.bytea(1) == [])
        #expect(try row.int(2) == 512)
        #expect(try row.bytea(3) == [0x5c, 0x22, 0])
        #expect(throws: PostgresError.self) { try row.bytea(4) }
        #expect(throws: PostgresError.self) { try row.bytea(5) }
    }

    @Test("integers of every width to their limits, NULL as nil, and text that is no integer refused")
    func integers() throws {
        let row = try row(
            """
            SELECT 0::smallint, (-32768)::smallint, 2147483647::int, (-9223372036854775808)::bigint,
                   9223372036854775807::bigint, NULL::int, '9223372036854775808'::text, ''::text, '-'::text,
                   '12a'::text, ' 1'::text, '+42'::text, '007'::text
            """)
        #expect(try row.int(0) == 0)
        #expect(try row.int(1) == -32768)
        #expect(try row.int(2) == 2_147_483_647)
        #expect(try row.int(3) == Int.min)
        #expect(try row.int(4) == Int.max)
        #expect(try row.optionalInt(5) == nil)
        #expect(try row.optionalInt(2) == 2_147_483_647)
        #expect(throws: PostgresError.self) { try row.int(5) }
        for refused in 6...10 {
            #expect(throws: PostgresError.self) { try row.int(refused) }
            #expect(Int(row[refused]!) == nil)
        }
        // What Int(String) accepts, the row accepts too.
        #expect(try row.int(11) == 42)
        #expect(try row.int(12) == 7)
    }

    @Test("booleans, doubles and uuids; malformed ones refused with decoding_failed")
    func otherTypes() throws {
        let id = UUID()
        let row = try row(
            """
            SELECT true, false, NULL::bool, 'tf'::text, 0.25::float8, 'Infinity'::float8, '-1e+300'::float8,
                   $1::uuid, NULL::uuid, 'not-a-uuid'::text, upper($1::text), 'x'::text
            """, [id])
        #expect(try row.bool(0))
        #expect(try !row.bool(1))
        #expect(throws: PostgresError.self) { try row.bool(2) }
        #expect(throws: PostgresError.self) { try row.bool(3) }
        #expect(try row.double(4) == 0.25)
        #expect(try row.double(5) == .infinity)
        #expect(try row.double(6) == -1e300)
        #expect(try row.uuid(7) == id)
        #expect(throws: PostgresError.self) { try row.uuid(8) }
        #expect(throws: PostgresError.self) { try row.uuid(9) }
        #expect(try row.uuid(10) == id)
        do {
            _ = try row.uuid(11)
            Issue.record("x is no uuid")
        } catch let error as PostgresError {
            #expect(error.code == .decodingFailed)
        }
    }

    @Test(
        "by name: each value read by its output column's name, exactly as spelled; a missing or malformed column's error names it"
    )
    func byName() throws {
        let result = try pool.withConnection { try $0.query(#"SELECT 7 AS count, 'x' AS "Mixed", NULL::int AS none"#) }
        let row = try #require(result.first)
        #expect(try row.int("count") == 7)
        #expect(try row.string("Mixed") == "x")
        #expect(try row.optionalInt("none") == nil)
        #expect(try result.column("none") == 2)
        for (read, named) in [
            ({ _ = try row.int("missing") }, "missing"), ({ _ = try row.int("mixed") }, "mixed"),
            ({ _ = try row.int("Mixed") }, "Mixed"),
        ] as [(() throws -> Void, String)] {
            do {
                try read()
                Issue.record("\(named) read")
            } catch let error as PostgresError {
                #expect(error.code == .decodingFailed)
                #expect(error.serverMessage.contains(named), "\(error.serverMessage)")
            }
        }
    }

    @Test("timestamps: with and without a fraction, before 1970, leap days, far years, other zones' offsets")
    func timestamps() throws {
        let texts = [
            "2026-11-29 13:30:51.123456+00", "2026-11-29 13:30:51+00", "2026-11-29 13:30:51.5+00",
            "1969-12-31 23:59:59.999999+00", "1970-01-01 00:00:00+00", "1900-03-01 00:00:00+00",
            "2000-02-29 12:00:00+00", "2024-02-29 23:59:59.000001+00", "2100-03-01 00:00:00+00",
            "0001-01-01 00:00:00+00", "9999-12-31 12:00:00.5+00", "2026-06-30 10:00:00+05:30",
            "2026-01-01 00:00:00-09:30",
        ]
        try pool.withTransaction { connection in
            // A Date (a Double of seconds) keeps every microsecond only within about 285 years of 1970:
            // the far years here have whole or half seconds.
            // A fixed half-hour offset makes the server print "+05:30" (workers use UTC).
            try connection.execute("SET LOCAL TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE")
            let rows = try connection.query(
                """
                SELECT t::timestamptz, (extract(epoch FROM t::timestamptz) * 1000000)::bigint, t::timestamptz::text
                  FROM unnest($1::text[]) AS t
                """, [texts]
            ).rows
            #expect(rows.count == texts.count)
            for row in rows {
                let micros = try row.int(1)
                let date = try row.date(0)
                let shown = try row.string(2)
                #expect(shown.hasSuffix("+05:30"))
                #expect(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) == Int64(micros), "\(shown)")
                // The String parser gives the very same value.
                #expect(PostgresTimestamp.parse(try row.string(0)) == date)
            }
        }
        let nulls = try row("SELECT NULL::timestamptz, 'infinity'::timestamptz, 'soon'::text")
        #expect(try nulls.optionalDate(0) == nil)
        #expect(throws: PostgresError.self) { try nulls.date(0) }
        #expect(throws: PostgresError.self) { try nulls.date(1) }
        #expect(throws: PostgresError.self) { try nulls.optionalDate(2) }
    }

    @Test("many rows with NULLs between values; empty results; commands' counts; column names")
    func results() throws {
        let result = try pool.withConnection { connection in
            try connection.query(
                "SELECT n, CASE WHEN n % 2 = 0 THEN NULL ELSE 'v' || n END AS label FROM generate_series(1, 1000) AS n")
        }
        #expect(result.columns == ["n", "label"])
        #expect(result.rows.count == 1000)
        #expect(try result.rows.map { try $0.int(0) } == Array(1...1000))
        #expect(result.rows.map { $0[1] } == (1...1000).map { $0 % 2 == 0 ? nil : "v\($0)" })
        #expect(try result.first?.int(0) == 1)
        #expect(try result.rows.last?.int(0) == 1000)

        let empty = try pool.withConnection { try $0.query("SELECT 1 AS one WHERE false") }
        #expect(empty.rows.isEmpty && empty.first == nil && empty.columns == ["one"])

        let table = "t_" + UUID().uuidString.prefix(8).lowercased()
        try pool.withConnection { try $0.execute("CREATE TABLE \(table) (n int)") }
        defer { _ = try? pool.withConnection { try $0.execute("DROP TABLE \(table)") } }
        let inserted = try pool.withConnection {
            try $0.query("INSERT INTO \(table) SELECT generate_series(1, $1::int)", [37])
        }
        #expect(inserted.affectedRows == 37 && inserted.rows.isEmpty && inserted.columns.isEmpty)
        let updated = try pool.withConnection { try $0.query("UPDATE \(table) SET n = n + 1 RETURNING n") }
        #expect(updated.affectedRows == 37 && updated.rows.count == 37)
    }

    @Test("a result outlives its connection and is read from other threads at once")
    func outlivesConnection() async throws {
        var connection: PostgresConnection? = try PostgresConnection(url: TestEnvironment.databaseURL)
        let result = try connection!.query("SELECT n, md5(n::text) FROM generate_series(1, 200) AS n")
        connection = nil
        let sums = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var sum = 0
                    for row in result.rows { sum += (try? row.int(0)) ?? 0; sum += row[1]?.count ?? 0 }
                    return sum
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sums == Array(repeating: (1...200).reduce(0, +) + 200 * 32, count: 4))
    }
}
