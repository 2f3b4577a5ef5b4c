import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The rate windows' running sums (sql/036_rate_windows.sql, sql/functions/rate_counts.sql): every way a
/// sum is read (no row yet, an edge moved forward by subtracting, an edge too far behind or ahead to move)
/// gives what summing the buckets gives, and every writer keeps the row true.
@Suite("Rate windows", .serialized, .requiresDatabase)
struct RateWindowTests {
    static let pool = IntakePushTests.pool

    /// Epoch seconds on a minute boundary a day ahead of the clock: the buckets written around it are out of
    /// reach of the janitor of an intake another suite runs (it deletes buckets that are old).
    static func ahead() throws -> Int {
        try StoreDatabase.migrate(pool)
        let now = Int(Date().timeIntervalSince1970)
        return (now + 86_400) / 60 * 60
    }

    func execute(_ sql: String, _ values: [any PostgresEncodable]) throws {
        try Self.pool.withConnection { _ = try $0.query(sql, values) }
    }

    /// herald_rate_counts at `now`, and the same two sums read straight from the buckets.
    func counts(_ partner: UUID, at now: Int) throws -> (read: [Int], summed: [Int]) {
        try Self.pool.withConnection { connection in
            let read = try connection.query(
                "SELECT minute_count, day_count FROM herald_rate_counts($1, $2)",
                [partner, now]
            ).first!
            let summed = try connection.query(
                """
                SELECT (SELECT coalesce(sum(count), 0) FROM rate_buckets
                         WHERE partner_id = $1 AND granularity = 's' AND bucket > $2::int8 - 60)::int4,
                       (SELECT coalesce(sum(count), 0) FROM rate_buckets
                         WHERE partner_id = $1 AND granularity = 'm' AND bucket > $2::int8 / 60 - 1440)::int4
                """, [partner, now]
            ).first!
            return ([try read.int(0), try read.int(1)], [try summed.int(0), try summed.int(1)])
        }
    }

    /// A full day of minutes (1 each) and a full minute of seconds (2 each) up to `t`.
    func fill(_ partner: UUID, upTo t: Int) throws {
        try execute(
            """
            INSERT INTO rate_buckets (partner_id, granularity, bucket, count)
            SELECT $1::uuid, 'm'::"char", $2::int8 / 60 - g, 1 FROM generate_series(0, 1439) g
            UNION ALL
            SELECT $1::uuid, 's'::"char", $2::int8 - g, 2 FROM generate_series(0, 59) g
            """, [partner, t])
    }

    @Test("a sum read from the row, moved forward by a few seconds or minutes, is the buckets' sum")
    func movedForward() throws {
        let t = try Self.ahead()
        let partner = UUID()
        try fill(partner, upTo: t)
        // No row yet: both sums from the buckets.
        var c = try counts(partner, at: t)
        #expect(c.read == [120, 1_440] && c.read == c.summed)
        // The row a writer leaves at t.
        try execute(
            """
            INSERT INTO rate_windows (partner_id, minute_edge, minute_count, day_edge, day_count)
            VALUES ($1, $2::int8 - 60, 120, $2::int8 / 60 - 1440, 1440)
            """, [partner, t])
        c = try counts(partner, at: t)
        #expect(c.read == [120, 1_440])
        // 10 s later: the 10 oldest seconds leave the minute window (subtracted from the row).
        c = try counts(partner, at: t + 10)
        #expect(c.read == [100, 1_440] && c.read == c.summed)
        // 10 minutes later: the minute window's edge is too far behind (read from the buckets: none left), the
        // day's moves forward by 10 minutes.
        c = try counts(partner, at: t + 600)
        #expect(c.read == [0, 1_430] && c.read == c.summed)
        // An hour later the day's edge is too far behind too.
        c = try counts(partner, at: t + 3_600)
        #expect(c.read == [0, 1_380] && c.read == c.summed)
        // A clock stepped back: both edges are ahead of the window, so both sums come from the buckets.
        c = try counts(partner, at: t - 30)
        #expect(c.read == c.summed && c.read == [120, 1_440])
    }

    @Test("a row whose edge lags more than the janitor allows is not trusted")
    func laggingRowIgnored() throws {
        let t = try Self.ahead()
        let partner = UUID()
        try fill(partner, upTo: t)
        // A row that disagrees with the buckets, as one left behind by buckets the janitor deleted would.
        try execute(
            """
            INSERT INTO rate_windows (partner_id, minute_edge, minute_count, day_edge, day_count)
            VALUES ($1, $2::int8 - 60, 999, $2::int8 / 60 - 1440, 99999)
            """, [partner, t])
        // 31 s and 31 minutes behind: both sums from the buckets.
        let c = try counts(partner, at: t + 31 * 60)
        #expect(c.read == c.summed && c.read == [0, 1_409])
        let minute = try counts(partner, at: t + 31)
        #expect(minute.read[0] == minute.summed[0] && minute.read[0] == 58)
    }

    @Test("the intake's batches, reservations and refunds keep the row equal to the buckets")
    func writersKeepTheRow() throws {
        let fixture = try IntakePushTests.fixture(perMinute: 1_000, perDay: 1_002)
        let partner = fixture.partner.id
        // The partner has sent all day: a minute bucket for each of the last 1,000 minutes.
        try execute(
            """
            INSERT INTO rate_buckets (partner_id, granularity, bucket, count)
            SELECT $1, 'm', floor(extract(epoch FROM clock_timestamp()))::int8 / 60 - g, 1 FROM generate_series(1, 1000) g
            """, [partner])
        let oldest = try Self.pool.withConnection {
            try $0.query("SELECT min(bucket) FROM rate_buckets WHERE partner_id = $1", [partner]).first!.int(0)
        }
        let writer = IntakeWriter(pool: Self.pool)
        let outcomes = try writer.write((0..<3).map { IntakePushTests.push(fixture, to: fixture.ios[$0]) })
        guard case .accepted = outcomes[0], case .accepted = outcomes[1], case .limited(let refused) = outcomes[2]
        else {
            Issue.record("expected two accepted and one refused: \(outcomes)")
            return
        }
        #expect(refused.dayCount == 1_002)
        // The oldest minute is read for the refusal: it frees the first slot.
        #expect(refused.dayOldest == oldest)
        func row() throws -> [Int] {
            try Self.pool.withConnection { connection in
                let r = try connection.query(
                    "SELECT minute_count, day_count FROM rate_windows WHERE partner_id = $1",
                    [partner]
                ).first!
                return [try r.int(0), try r.int(1)]
            }
        }
        #expect(try row() == [2, 1_002])
        // A refund gives one back, in the buckets and in the row.
        let second = try Self.pool.withConnection {
            try $0.query("SELECT max(bucket) FROM rate_buckets WHERE partner_id = $1 AND granularity = 's'", [partner])
                .first!.int(0)
        }
        try execute("SELECT herald_rate_refund($1, $2)", [partner, second])
        #expect(try row() == [1, 1_001])
        // A reservation takes it, and the next is refused with the oldest minute.
        let reserve = try Self.pool.withConnection { connection in
            try (0..<2).map { _ in
                let r = try connection.query(Queries.PushRequests.reserveRate.text, [partner, 1_000, 1_002]).first!
                return (try r.bool("admitted"), try r.optionalInt("day_oldest"))
            }
        }
        #expect(reserve[0].0 && reserve[0].1 == nil)
        #expect(!reserve[1].0 && reserve[1].1 != nil)
        #expect(try row() == [2, 1_002])
        let now = try Self.pool.withConnection {
            try $0.query("SELECT floor(extract(epoch FROM clock_timestamp()))::int8").first!.int(0)
        }
        let c = try counts(partner, at: now)
        #expect(c.read == c.summed)
    }
}
