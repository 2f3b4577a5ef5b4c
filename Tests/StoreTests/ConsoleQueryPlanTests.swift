import Foundation
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The console's statements (ConsoleStore) read the indexes their comments name, proven with EXPLAIN on a private
/// database whose history holds 60,000 rows (95% sent) across 300 requests and 3 partners, and whose audit log
/// holds 30,000 requests of 3 mini-apps, and 30,000 finished webhook events (2% failed) over 3.5 days.
@Suite("Console query plans", .serialized, .requiresDatabase)
struct ConsoleQueryPlanTests {
    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            let c = db.connection
            _ = try c.execute("INSERT INTO tenants (id) VALUES ('console-plans') ON CONFLICT DO NOTHING")
            _ = try c.execute(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
                SELECT ('00000000-0000-0000-0000-00000000000' || g)::uuid, 'app.' || g, 'App ' || g,
                       'console-plans', 'hash' || g, 100, 1000
                  FROM generate_series(1, 3) g
                ON CONFLICT DO NOTHING
                """)
            _ = try c.execute(
                """
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts,
                                              last_error, created_at, finished_at, request_created_at, payload)
                SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((g % 300)::text, 12, '0'))::uuid,
                       ('00000000-0000-0000-0000-00000000000' || (1 + g % 3))::uuid, 0, 'apns', 'u' || g, 'd',
                       CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'sent' END, 1,
                       CASE WHEN g % 20 = 0 THEN 'BadCollapseId' END, now(), now() - make_interval(secs => g * 3),
                       now() - make_interval(secs => g * 3), CASE WHEN g % 20 = 0 THEN '{}' END
                  FROM generate_series(1, 60000) g
                """)
            _ = try c.execute(
                """
                INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane, recipients,
                                           deliveries, suppressed, missing)
                SELECT herald_uuid_v7(), now() - make_interval(secs => g), ('00000000-0000-0000-0000-00000000000' || (1 + g % 3))::uuid,
                       'app.' || (1 + g % 3), 'Title', 'Body', '{}', 0, 1, 1, 0, '[]'
                  FROM generate_series(1, 30000) g
                """)
            _ = try c.execute(
                """
                INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, state,
                                            available_at, finished_at)
                SELECT gen_random_uuid(), ('00000000-0000-0000-0000-00000000000' || (1 + g % 3))::uuid, 'push.completed',
                       gen_random_uuid(), '{}', now(), now(), CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'delivered' END,
                       now(), now() - make_interval(secs => g * 10)
                  FROM generate_series(1, 30000) g
                """)
            try c.execute("ANALYZE webhook_events")
            try c.execute("ANALYZE delivery_history")
            try c.execute("ANALYZE push_requests")
            try c.execute("ANALYZE partners")
            return db
        } catch {
            fatalError("cannot build the console query-plan fixture: \(error)")
        }
    }()

    /// The plan, each partition's index named by its parent's name.
    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> String {
        let c = Self.database.connection
        try c.execute("SET plan_cache_mode = force_custom_plan")
        defer { _ = try? c.execute("RESET plan_cache_mode") }
        var text = try c.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }.joined(separator: "\n")
        let parents = try c.query(
            """
            SELECT child.relname, parent.relname FROM pg_inherits i
              JOIN pg_class child ON child.oid = i.inhrelid JOIN pg_class parent ON parent.oid = i.inhparent
             WHERE parent.relkind = 'I' AND (parent.relname LIKE 'delivery_history%' OR parent.relname LIKE 'push_requests%')
             ORDER BY length(child.relname) DESC
            """
        ).rows.map { (try $0.string(0), try $0.string(1)) }
        for (child, parent) in parents { text = text.replacingOccurrences(of: " \(child) ", with: " \(parent) ") }
        return text
    }

    /// The plan of `query` with its own bindings.
    func plan<Query: NamedQuery>(_ query: Query) throws -> String {
        try plan(Query.sql.text, query.bindings)
    }

    /// No sequential scan but of empty partitions (a cost under 0.1).
    func noScan(_ text: String, _ table: String) -> Bool {
        text.split(separator: "\n").filter { $0.contains("Seq Scan on \(table)") }.allSatisfy {
            $0.contains("cost=0.00..0.0")
        }
    }

    @Test("the last hour's outcomes read the BRIN index on finished_at")
    func lastHour() throws {
        let text = try plan(Queries.Console.lastHour.text)
        #expect(text.contains("delivery_history_finished"), "\(text)")
        #expect(noScan(text, "delivery_history"), "\(text)")
    }

    @Test("failures read the partial replayable indexes, never the sent rows")
    func failures() throws {
        let since = Date().addingTimeInterval(-86_400)
        let all = try plan(Queries.Console.failures.text, [since, 200])
        #expect(all.contains("delivery_history_replayable"), "\(all)")
        #expect(noScan(all, "delivery_history"), "\(all)")
        let one = try plan(Queries.Console.failuresOfPartner.text, [since, 200, "app.1"])
        #expect(one.contains("delivery_history_replayable"), "\(one)")
        #expect(noScan(one, "delivery_history"), "\(one)")
    }

    @Test("request search: by mini-app push_requests_mini_app, by id the primary key, newest first by the key")
    func requests() throws {
        var search = RequestSearch()
        search.miniAppID = "app.2"
        let appPlan = try plan(ConsoleStore.requestSearch(search))
        #expect(appPlan.contains("push_requests_mini_app"), "\(appPlan)")
        #expect(noScan(appPlan, "push_requests"), "\(appPlan)")

        search = RequestSearch()
        search.id = try #require(
            try Self.database.connection.query("SELECT id FROM push_requests LIMIT 1").first?.uuid(0))
        let idPlan = try plan(ConsoleStore.requestSearch(search))
        #expect(idPlan.contains("push_requests_pkey"), "\(idPlan)")
        #expect(noScan(idPlan, "push_requests"), "\(idPlan)")

        search = RequestSearch()
        search.since = Date().addingTimeInterval(-3_600)
        let recentPlan = try plan(ConsoleStore.requestSearch(search))
        #expect(recentPlan.contains("push_requests_pkey"), "\(recentPlan)")
        #expect(noScan(recentPlan, "push_requests"), "\(recentPlan)")
    }

    @Test("every combination of request search conditions reads an index, its absent conditions folded away")
    func requestSearchCombinations() throws {
        let id = try #require(
            try Self.database.connection.query("SELECT id FROM push_requests LIMIT 1").first?.uuid(0))
        for bits in 0..<16 {
            var search = RequestSearch()
            if bits & 1 != 0 { search.id = id }
            if bits & 2 != 0 { search.miniAppID = "app.2" }
            if bits & 4 != 0 { search.since = Date().addingTimeInterval(-7_200) }
            // Ahead of now: the fixture's ids carry the time they were written (UUIDv7), seconds ago, and a window
            // that ends before an id's time is folded to no scan at all.
            if bits & 8 != 0 { search.until = Date().addingTimeInterval(60) }
            let text = try plan(ConsoleStore.requestSearch(search))
            #expect(noScan(text, "push_requests"), "\(search): \(text)")
            #expect(!text.contains("IS NULL) OR"), "\(search): \(text)")
            #expect(
                text.contains("push_requests_pkey") || text.contains("push_requests_mini_app"), "\(search): \(text)")
        }
    }

    @Test("a request's deliveries: failures by delivery_history_request, the rest by the BRIN within its hour")
    func requestDeliveries() throws {
        let request = UUID(uuidString: "00000000-0000-7000-8000-000000000007")!
        let text = try plan(Queries.Console.requestDeliveries.text, [request, Date().addingTimeInterval(-600), 500])
        #expect(text.contains("delivery_history_request"), "\(text)")
        #expect(text.contains("delivery_history_finished"), "\(text)")
        #expect(noScan(text, "delivery_history"), "\(text)")
    }
}

extension ConsoleQueryPlanTests {
    @Test("failed webhooks read a partial index of webhook_events, never the whole table")
    func failedWebhooks() throws {
        let text = try plan(Queries.Console.failedWebhooks.text, [Date().addingTimeInterval(-86_400), 200])
        #expect(text.contains("webhook_events_finished") || text.contains("webhook_events_failed"), "\(text)")
        #expect(!text.contains("Seq Scan on webhook_events"), "\(text)")
    }
}
