import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The indexes of the Live Activity audit (sql/033_live_activity_events.sql), proven with EXPLAIN: the partner's
/// list reads one activity's events in index order from its own month on, and the completion's count of an
/// event's outcomes is a primary-key probe per event, also with a generic plan made while the partition was small.
@Suite("Query plans: Live Activity events", .serialized, .requiresDatabase)
struct ActivityEventQueryPlanTests {
    /// `$1` events spread over 2,000 activities (ten each), made now.
    static let insert = """
        INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, devices_apns, devices_fcm)
        SELECT e.id, herald_uuid_v7_time(e.id), e.activity, '00000000-0000-0000-0000-0000000000aa', 'update', 1, 1
          FROM (SELECT herald_uuid_v7() AS id,
                       ('00000000-0000-7000-8000-' || lpad((g % 2000)::text, 12, '0'))::uuid AS activity
                  FROM generate_series(1, $1::int) g) e
        """

    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            _ = try db.connection.query(insert, [100])
            try db.connection.execute("ANALYZE live_activity_events")
            return db
        } catch {
            fatalError("cannot build the activity event query-plan fixture: \(error)")
        }
    }()

    static var month: String {
        get throws { try database.connection.query("SELECT to_char(now(), 'YYYY_MM')").first!.string(0) }
    }

    /// The fixture at its full size (once).
    static let grown: Bool = {
        do {
            _ = try database.connection.query(insert, [20_000])
            try database.connection.execute("ANALYZE live_activity_events")
            return true
        } catch {
            fatalError("cannot grow the activity event fixture: \(error)")
        }
    }()

    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }

    func plan(_ sql: NamedSQL, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.plan(sql, parameters)
    }

    @Test("the partner's list reads one activity's events from its index, newest first, from the activity's month")
    func list() throws {
        // The completion test below runs first in this suite; either order works.
        _ = Self.grown
        let month = try Self.month
        let activity = UUID(uuidString: "00000000-0000-7000-8000-000000000042")!
        let since = Date().addingTimeInterval(-60)
        let partner = UUID(uuidString: "00000000-0000-0000-0000-0000000000aa")!
        // The activity's month is read through the index only (an activity's few events may then be sorted:
        // the planner's choice for a dozen rows); later months, empty here, cost nothing.
        let first = try plan(Queries.Activities.events, [activity, partner, since, 21])
        #expect(first.contains("live_activity_events_\(month)_activity_id_created_at_id_idx"), "\(first)")
        #expect(!first.contains("Seq Scan on live_activity_events_\(month)"), "\(first)")
        // Months before the activity's are not read.
        let previous = try Self.database.connection.query(
            "SELECT to_char(now() - interval '1 month', 'YYYY_MM')"
        ).first!.string(0)
        #expect(!first.contains("live_activity_events_\(previous)"), "\(first)")

        let after = try plan(Queries.Activities.eventsAfter, [activity, partner, since, 21, Date(), UUID()])
        #expect(after.contains("live_activity_events_\(month)_activity_id_created_at_id_idx"), "\(after)")
        // The cursor bounds the index range, it does not filter what the scan read.
        let bounds = after.split(separator: "\n").filter { $0.contains("Index Cond") }
        #expect(bounds.contains { $0.contains("ROW(created_at, id) <") }, "\(after)")
        #expect(!after.contains("Seq Scan on live_activity_events_\(month)"), "\(after)")
    }

    @Test("the completion's count of an event's outcomes probes the event's primary key, never a scan of the month")
    func completionCounts() throws {
        let connection = Self.database.connection
        let sql = try functionStatement(
            "herald_activity_event_counts", on: connection, from: "WITH counts AS",
            renaming: ["p_events": "$1", "p_sent": "$2", "p_failed": "$3", "p_superseded": "$4"])
        // The function's own settings (generic plans, no sequential scans), as it runs the statement.
        let settings = try connection.query(
            """
            SELECT s FROM pg_proc, unnest(proconfig) s WHERE proname = 'herald_activity_event_counts'
            """
        ).rows.map { try $0.string(0).split(separator: "=", maxSplits: 1).map(String.init) }
        #expect(settings.contains(["plan_cache_mode", "force_generic_plan"]))
        for setting in settings { try connection.execute("SET \(setting[0]) = '\(setting[1])'") }
        defer {
            _ = try? connection.execute("DEALLOCATE event_counts")
            for setting in settings { _ = try? connection.execute("RESET \(setting[0])") }
        }
        try connection.execute("PREPARE event_counts (uuid[], int[], int[], int[]) AS \(sql)")
        _ = try connection.execute("EXECUTE event_counts ('{}', '{}', '{}', '{}')")  // planned while small
        _ = Self.grown
        let ids = try connection.query(
            """
            SELECT array_agg(id)::text FROM (SELECT id FROM live_activity_events ORDER BY id DESC LIMIT 12) x
            """
        ).first!.string(0)
        let text = try connection.execute(
            """
            EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF)
            EXECUTE event_counts ('\(ids)', array_fill(1, ARRAY[12]), NULL, NULL)
            """
        ).rows.map { try $0.string(0) }.joined(separator: "\n")
        let month = try Self.month
        #expect(!text.contains("Seq Scan"), "\(text)")
        #expect(text.contains("Index Scan using live_activity_events_\(month)_pkey"), "\(text)")
        let lines = text.split(separator: "\n")
        let scanned = lines.filter { $0.contains("Scan") && $0.contains("live_activity_events_\(month)") }
            .map { Self.number(after: "actual rows=", in: $0) ?? .max }
        #expect(!scanned.isEmpty && scanned.allSatisfy { $0 <= 12 }, "\(text)")
        #expect(try connection.query("SELECT count(*) FROM live_activity_events WHERE sent = 1").first!.int(0) == 12)
    }

    /// The whole number right after `marker` in an EXPLAIN line.
    static func number(after marker: String, in line: Substring) -> Int? {
        line.range(of: marker).flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
    }
}
