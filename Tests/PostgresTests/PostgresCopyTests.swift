import Foundation
import HeraldTestSupport
import Postgres
import Testing

/// COPY FROM STDIN (`PostgresConnection.copy`, `PostgresCopyRows`) against the real test database.
@Suite("Postgres COPY", .requiresDatabase)
struct PostgresCopyTests {
    let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    @Test("text, NULL, UUIDs, times and every character COPY's text format escapes round-trip")
    func roundTrip() throws {
        let id = UUID()
        let date = Date(timeIntervalSince1970: 1_795_959_651.123456)
        let texts = [
            "plain", "tab\there", "new\nline", "carriage\rreturn", "back\\slash \\N", "ünïcødé ☃", "",
            #"{"json":"with \"quotes\" and \\ escapes"}"#,
        ]
        let rows = try pool.withConnection { connection in
            try connection.transaction { connection -> [PostgresRow] in
                try connection.execute(
                    "CREATE TEMP TABLE copy_round_trip (n integer, t text, u uuid, d timestamptz) ON COMMIT DROP")
                var batch = PostgresCopyRows()
                for (index, text) in texts.enumerated() {
                    batch.field(index)
                    batch.field(text)
                    batch.field(index == 0 ? id : nil)
                    batch.field(date)
                    batch.endRow()
                }
                batch.field(99)
                batch.field(nil as String?)
                batch.field(nil as UUID?)
                batch.field(nil as Date?)
                batch.endRow()
                #expect(batch.count == texts.count + 1)
                #expect(
                    try connection.copy("COPY copy_round_trip (n, t, u, d) FROM STDIN", rows: batch) == texts.count + 1)
                return try connection.query("SELECT n, t, u, d FROM copy_round_trip ORDER BY n").rows
            }
        }
        #expect(try rows.dropLast().map { try $0.string(1) } == texts)
        #expect(try rows[0].uuid(2) == id)
        #expect(rows[1].optionalString(2) == nil)
        #expect(abs(try rows[0].date(3).timeIntervalSince(date)) < 0.000_001)
        #expect(rows.last!.optionalString(1) == nil && rows.last!.optionalString(3) == nil)
    }

    @Test("several MiB are sent in pieces and all arrive")
    func large() throws {
        let payload = String(repeating: "x", count: 3_000)
        let copied = try pool.withConnection { connection in
            try connection.transaction { connection -> Int in
                try connection.execute("CREATE TEMP TABLE copy_large (n integer, t text) ON COMMIT DROP")
                var batch = PostgresCopyRows()
                for n in 0..<2_000 {
                    batch.field(n)
                    batch.field(payload)
                    batch.endRow()
                }
                #expect(batch.bytes.count > 5_000_000)
                _ = try connection.copy("COPY copy_large FROM STDIN", rows: batch)
                return try connection.query("SELECT count(*), sum(length(t)) FROM copy_large").first!.int(0)
            }
        }
        #expect(copied == 2_000)
    }

    @Test(
        "a value the column refuses throws with its SQLSTATE and leaves the connection usable; a statement that is not a COPY FROM STDIN throws"
    )
    func errors() throws {
        try pool.withConnection { connection in
            try connection.execute("CREATE TEMP TABLE copy_errors (n integer NOT NULL)")
            var batch = PostgresCopyRows()
            batch.field("not a number")
            batch.endRow()
            do {
                try connection.copy("COPY copy_errors FROM STDIN", rows: batch)
                Issue.record("a bad integer was copied")
            } catch let error as PostgresError {
                #expect(error.sqlState == "22P02")
            }
            #expect(connection.isHealthy && connection.isIdle)
            var good = PostgresCopyRows()
            good.field(7)
            good.endRow()
            #expect(try connection.copy("COPY copy_errors FROM STDIN", rows: good) == 1)
            #expect(throws: PostgresError.self) { try connection.copy("SELECT 1", rows: good) }
            #expect(try connection.query("SELECT count(*) FROM copy_errors").first!.int(0) == 1)
            try connection.execute("DROP TABLE copy_errors")
        }
    }
}
