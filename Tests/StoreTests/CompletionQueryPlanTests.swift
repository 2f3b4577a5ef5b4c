import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The completion's update of the requests' counts (sql/functions/complete_deliveries.sql), run as the
/// function runs it: a generic plan, made once in a worker's session while the month's partition was
/// small and kept while the partition grew (new rows do not invalidate it). An earlier join was planned
/// as a hash join then, reading the whole partition on every completion.
@Suite("Query plans: the completion's request counts", .serialized, .requiresDatabase)
struct CompletionQueryPlanTests {
    static let insert = """
        INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane, recipients,
                                   deliveries, suppressed, missing)
        SELECT gen_random_uuid(), now() - make_interval(secs => g / 1000.0), gen_random_uuid(), 'plans.app',
               't', 'b', '{}', 0, 1, 1, 0, '{}'
          FROM generate_series(1, $1::int) g
        """

    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            _ = try db.connection.query(insert, [100])
            try db.connection.execute("ANALYZE push_requests")
            return db
        } catch {
            fatalError("cannot build the completion query-plan fixture: \(error)")
        }
    }()

    @Test(
        "each finished request's audit row is locked and updated through the primary key, never a scan of the month, nor of other months"
    )
    func requestCounts() throws {
        let connection = Self.database.connection
        let sql = try functionStatement(
            "herald_complete_deliveries", on: connection, from: "WITH counts AS (\n            SELECT c.request_id",
            renaming: [
                "v_c_requests": "$1", "v_c_created": "$2", "v_c_sent": "$3", "v_c_failed": "$4",
                "v_c_suppressed": "$5", "v_c_superseded": "$6",
            ])
        // The function's own settings (generic plans, no sequential scans), as it runs the statement.
        let settings = try connection.query(
            """
            SELECT s FROM pg_proc, unnest(proconfig) s WHERE proname = 'herald_complete_deliveries'
            """
        ).rows.map { try $0.string(0).split(separator: "=", maxSplits: 1).map(String.init) }
        #expect(settings.contains(["plan_cache_mode", "force_generic_plan"]))
        for setting in settings { try connection.execute("SET \(setting[0]) = '\(setting[1])'") }
        defer {
            _ = try? connection.execute("DEALLOCATE request_counts")
            for setting in settings { _ = try? connection.execute("RESET \(setting[0])") }
        }
        try connection.execute("PREPARE request_counts (uuid[], timestamptz[], int[], int[], int[], int[]) AS \(sql)")
        // Planned while small.
        _ = try connection.execute("EXECUTE request_counts ('{}', '{}', '{}', '{}', '{}', '{}')")
        _ = try connection.query(Self.insert, [60000])
        let picked = try connection.query(
            """
            SELECT array_agg(id)::text, array_agg(created_at)::text
              FROM (SELECT id, created_at FROM push_requests ORDER BY id DESC LIMIT 12) x
            """
        ).first!
        let ids = try picked.string(0), created = try picked.string(1)
        let text = try connection.execute(
            """
            EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
            EXECUTE request_counts ('\(ids)', '\(created)', array_fill(1, ARRAY[12]), array_fill(0, ARRAY[12]),
                                   array_fill(0, ARRAY[12]), array_fill(0, ARRAY[12]))
            """
        ).rows.map { try $0.string(0) }.joined(separator: "\n")
        let month = try connection.query("SELECT to_char(now(), 'YYYY_MM')").first!.string(0)
        #expect(!text.contains("Seq Scan on push_requests_\(month)"), "\(text)")
        #expect(text.contains("Index Scan using push_requests_\(month)_pkey"), "\(text)")
        // Whatever the join, no scan of the partition returns more than the batch's twelve requests.
        let lines = text.split(separator: "\n")
        let scanned = lines.filter { $0.contains("Scan") && $0.contains("push_requests_\(month)") }
            .map { Self.number(after: "actual rows=", in: $0) ?? .max }
        #expect(!scanned.isEmpty && scanned.allSatisfy { $0 <= 12 }, "\(text)")
        // Other months' partitions are not searched: their scans are pruned or never run.
        let otherMonths = lines.filter {
            $0.contains("Scan") && $0.contains("on push_requests_") && !$0.contains(month)
        }
        #expect(otherMonths.allSatisfy { $0.contains("never executed") }, "\(text)")
        // The twelve rows updated, and twelve probes' worth of pages read, not the partition's 60,100 rows.
        let counted = try connection.query("SELECT count(*) FROM push_requests WHERE sent = 1").first!.int(0)
        #expect(counted == 12)
        let hits = lines.lazy.compactMap { Self.number(after: "Buffers: shared hit=", in: $0) }.first
        #expect((hits ?? .max) < 600, "\(text)")
    }

    /// The whole number right after `marker` in an EXPLAIN line.
    static func number(after marker: String, in line: Substring) -> Int? {
        line.range(of: marker).flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
    }
}
