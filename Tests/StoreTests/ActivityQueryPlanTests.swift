import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The index each Live Activity query relies on (sql/009_live_activities.sql), proven with EXPLAIN on a
/// private database with 20,000 users, 20,000 activities (half active, half finished), their targets and
/// deliveries: large enough that the planner would not pick an index by accident.
@Suite("Live Activity query plans", .serialized, .requiresDatabase)
struct ActivityQueryPlanTests {
    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            let c = db.connection
            _ = try c.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
                VALUES ('00000000-0000-0000-0000-0000000000aa', 'plans.app', 'Plans', 't1', 'x', 60, 10000)
                """)
            _ = try c.query("INSERT INTO users (id, tenant_id) SELECT 'u' || g, 't1' FROM generate_series(1, 20000) g")
            _ = try c.query(
                """
                INSERT INTO user_emails (tenant_id, email, user_id)
                SELECT 't1', 'u' || g || '@example.com', 'u' || g FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, apns_push_to_start_token)
                SELECT 'u' || g, 'iphone', 'ios', 'production', repeat('ab', 32) FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO mini_app_sessions (user_id, mini_app_id, last_seen_at)
                SELECT 'u' || g, 'app.' || (g % 20), now() FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                             status, last_timestamp, created_at, updated_at, expires_at, ended_at,
                                             apns_end_payload, fcm_end_payload, end_timestamp)
                SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000aa', 'plans.app', 'u' || g, 'progress',
                       '{}', '{}', '{}', CASE WHEN g % 2 = 0 THEN 'active' ELSE 'ended' END, 0, now(), now(),
                       now() + make_interval(secs => g), CASE WHEN g % 2 = 0 THEN NULL ELSE now() END, '{}', '{}', 0
                  FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO live_activity_targets (activity_id, device_id, service)
                SELECT id, 'iphone', 'apns' FROM live_activities
                """)
            _ = try c.query(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, service, user_id, device_id,
                                        environment, payload, available_at, activity_id, activity_event, state)
                SELECT gen_random_uuid(), id, created_at, partner_id, 'apns', user_id, 'iphone', 'production', '{}',
                       now(), id, 'update', CASE WHEN random() < 0.5 THEN 'pending' ELSE 'leased' END
                  FROM live_activities
                """)
            for table in [
                "users", "user_emails", "devices", "mini_app_sessions", "live_activities",
                "live_activity_targets", "deliveries",
            ] {
                try c.execute("ANALYZE \(table)")
            }
            return db
        } catch {
            fatalError("cannot build the activity query-plan fixture: \(error)")
        }
    }()

    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }

    func plan(_ sql: NamedSQL, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.plan(sql, parameters)
    }

    /// A function's body with its arguments as parameters, so the test EXPLAINs what the function runs.
    /// From `start` up to the first `;`, or through `through` when given.
    func body(of function: String, from start: String, through: String? = nil, arguments: [String]) throws -> String {
        try functionStatement(
            function, on: Self.database.connection, from: start, to: through ?? ";",
            throughEnd: through != nil,
            renaming: Dictionary(uniqueKeysWithValues: arguments.enumerated().map { ($1, "$\($0 + 1)") }))
    }

    @Test("a start's audience probes primary keys and the one-active index: no scan of the directory")
    func audience() throws {
        let query = try body(
            of: "herald_activity_audience", from: "WITH u AS",
            arguments: ["p_tenant", "p_email", "p_wallet", "p_mini_app", "p_session_since", "p_template"])
        let text = try plan(
            query,
            [
                "t1", "u42@example.com", "0x" + String(repeating: "0", count: 40), "plans.app", Date(),
                "progress",
            ])
        #expect(text.contains("user_emails_pkey"), "\(text)")
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("device_push_to_start_tokens_pkey"), "\(text)")
        #expect(text.contains("mini_app_sessions_pkey"), "\(text)")
        #expect(text.contains("live_activities_one_active"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("the partner's read of an activity's devices probes the targets' primary key")
    func devices() throws {
        let text = try plan(Queries.Activities.devices, [UUID()])
        #expect(text.contains("live_activity_targets_pkey"), "\(text)")
    }

    @Test("the sweep of starts that created nothing reads iPhones awaiting a token from their partial index")
    func unconfirmed() throws {
        let query = try body(
            of: "herald_activity_unconfirmed", from: "SELECT t.activity_id, t.device_id",
            through: "LIMIT p_limit", arguments: ["p_seconds", "p_limit"])
        let text = try plan(query, [120, 500])
        #expect(text.contains("live_activity_targets_awaiting_token"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("a start's budgets count the user's active activities and starts of the hour by index: no scan")
    func startBudgets() throws {
        // The statements as herald_activity_start_budget runs them (for a start at the partner's call and a scheduled
        // one when due), its INTO clauses left out.
        func statement(from start: String, into: String) throws -> String {
            try functionStatement(
                "herald_activity_start_budget", on: Self.database.connection, from: start,
                renaming: ["p_user": "$1", "p_mini_app": "$2", "p_now": "$3::timestamptz", into: ""])
        }
        let active = try statement(from: "SELECT count(*) INTO v_active", into: "INTO v_active")
        let activeText = try plan(active, ["u42", "app.7", Date()])
        #expect(activeText.contains("live_activities_one_active"), "\(activeText)")
        #expect(!activeText.contains("Seq Scan"), "\(activeText)")
        let starts = try statement(
            from: "SELECT coalesce(array_agg(a.created_at", into: "INTO v_user_starts, v_app_starts")
        let startsText = try plan(starts, ["u42", "app.7", Date()])
        #expect(startsText.contains("live_activities_user_starts"), "\(startsText)")
        #expect(!startsText.contains("Seq Scan"), "\(startsText)")
    }

    @Test("an activity is read by its primary key")
    func find() throws {
        let text = try plan(Queries.Activities.find, [UUID(), UUID()])
        #expect(text.contains("live_activities_pkey"), "\(text)")
    }

    @Test("the TTL sweep reads due activities from the partial expiry index")
    func sweep() throws {
        let query = try body(
            of: "herald_expire_activities", from: "SELECT a.id FROM live_activities a",
            through: "SKIP LOCKED", arguments: ["p_limit"])
        let text = try plan(query, [500])
        #expect(text.contains("live_activities_due"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("the sweep of scheduled starts reads due ones from their partial index, not the activities")
    func scheduledStarts() throws {
        let query = try body(
            of: "herald_activity_start_due", from: "SELECT a.id, a.partner_id", through: "SKIP LOCKED",
            arguments: ["p_now", "p_limit"])
        let text = try plan(query, [Date(), 500])
        #expect(text.contains("live_activities_scheduled"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("coalescing and supersession find an activity's rows on one device by deliveries_activity")
    func activityRows() throws {
        let pending = try plan(
            "SELECT d.id FROM deliveries d WHERE d.activity_id = $1 AND d.device_id = $2 AND d.state = 'pending'",
            [UUID(), "iphone"])
        #expect(pending.contains("deliveries_activity"), "\(pending)")
        let newer = try plan(
            """
            SELECT 1 FROM deliveries n WHERE n.activity_id = $1 AND n.device_id = $2
               AND (n.created_at, n.id) > ($3::timestamptz, $4::uuid)
            """, [UUID(), "iphone", Date(), UUID()])
        #expect(newer.contains("deliveries_activity"), "\(newer)")
    }

    @Test("retention deletes finished activities by the partial ended index")
    func retention() throws {
        let text = try plan(
            """
            SELECT id FROM live_activities WHERE status <> 'active' AND ended_at < now() - interval '7 days' LIMIT $1
            """, [5000])
        #expect(text.contains("live_activities_ended"), "\(text)")
    }
}
