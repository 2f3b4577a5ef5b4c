import Foundation
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The rows held for their user's quiet hours are found through the two small partial indexes of
/// sql/052_user_guards_visible.sql, never by a scan of the outbox, proven with EXPLAIN on a private database whose
/// outbox holds 20,000 pending rows of 2,000 requests and users, 20 of them held.
@Suite("Query plans: rows held for quiet hours", .serialized, .requiresDatabase)
struct HeldRowsQueryPlanTests {
    /// When the fixture's audit rows were created (whole seconds, as the database keeps them).
    static let created = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))

    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            try db.connection.execute(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id,
                                        device_id, environment, payload, available_at, last_error)
                SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((g % 2000)::text, 12, '0'))::uuid,
                       now(), '00000000-0000-0000-0000-000000000001', 0, 'apns', 'u' || (g % 2000), 'd' || g,
                       'production', '{}', now() + make_interval(secs => g),
                       CASE WHEN g % 1000 = 0 THEN 'quiet_hours' WHEN g % 7 = 0 THEN 'timeout' END
                  FROM generate_series(1, 20000) g
                """)
            // The audit rows of requests 0 and 1, which the summaries read.
            try db.connection.query(
                """
                INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane,
                                           recipients, deliveries, suppressed, missing)
                SELECT ('00000000-0000-7000-8000-' || lpad(g::text, 12, '0'))::uuid, $1,
                       '00000000-0000-0000-0000-000000000001', 'app', 'T', 'B', '{}', 0, 10, 10, 0, '{}'
                  FROM generate_series(0, 1) g
                """, [created])
            try db.connection.execute("ANALYZE deliveries")
            return db
        } catch {
            fatalError("cannot build the held-rows query-plan fixture: \(error)")
        }
    }()

    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> String {
        try Self.database.connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }

    @Test("a request's held count is a probe of deliveries_held_request, and counts only its held rows")
    func heldOfARequest() throws {
        let held = UUID(uuidString: "00000000-0000-7000-8000-000000000000")!
        let none = UUID(uuidString: "00000000-0000-7000-8000-000000000001")!
        let query = Queries.PushRequests.Summaries(ids: [held, none], createdAt: [Self.created, Self.created])
        let text = try Self.database.connection.plan(query)
        #expect(text.contains("deliveries_held_request"), "\(text)")
        #expect(!text.contains("Seq Scan on deliveries"), "\(text)")
        // Rows g = 2000k (k = 1 ... 10) are of request 0; of them, those with g % 1000 = 0 are held: all ten.
        let rows = try Self.database.connection.rows(query)
        #expect(rows.first { $0.id == held }?.held == 10)
        #expect(rows.first { $0.id == none }?.held == 0)
    }

    @Test("a host PUT that changes a user's quiet hours finds the user's held rows by deliveries_held_user")
    func releaseOfAUser() throws {
        let connection = Self.database.connection
        let sql = try functionStatement(
            "herald_put_user", on: connection, from: "UPDATE deliveries d",
            renaming: ["p_user": "$1"])
        let text = try connection.query("EXPLAIN " + sql, ["u0"]).rows.map { try $0.string(0) }
            .joined(separator: "\n")
        #expect(text.contains("deliveries_held_user"), "\(text)")
        #expect(!text.contains("Seq Scan on deliveries"), "\(text)")
    }
}
