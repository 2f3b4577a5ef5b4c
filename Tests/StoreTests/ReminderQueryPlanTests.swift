import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The index each reminder query relies on (sql/029_reminders.sql), proven with EXPLAIN on a private
/// database with 5,000 partners, 20,000 users, 40,000 reminders (a tenth still scheduled) and an outbox
/// of 40,000 rows: large enough that the planner would not pick an index by accident.
@Suite("Reminder query plans", .serialized, .requiresDatabase)
struct ReminderQueryPlanTests {
    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            let c = db.connection
            _ = try c.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
                SELECT md5('p' || g)::uuid, 'app.' || g, 'App', 't1', 'key-' || g, 60, 10000 FROM generate_series(0, 4999) g
                """)
            _ = try c.query("INSERT INTO users (id, tenant_id) SELECT 'u' || g, 't1' FROM generate_series(1, 20000) g")
            _ = try c.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, apns_token)
                SELECT 'u' || g, 'iphone', 'ios', 'production', repeat('ab', 32) FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO opt_outs (user_id, mini_app_id) SELECT 'u' || g, 'app.' || (g % 50) FROM generate_series(1, 20000) g
                """)
            _ = try c.query(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, service, user_id, device_id,
                                        environment, payload, available_at)
                SELECT md5('d' || g)::uuid, md5('r' || g)::uuid, now(), md5('p' || (g % 50))::uuid, 'apns',
                       'u' || (g % 20000 + 1), 'iphone', 'production', '{}', now() + make_interval(secs => g)
                  FROM generate_series(1, 40000) g
                """)
            _ = try c.query(
                """
                INSERT INTO reminders (id, user_id, mini_app_id, partner_id, request_id, request_created_at, title, body,
                                       at, deliveries, status, created_at)
                SELECT md5('m' || g)::uuid, 'u' || (g % 20000 + 1), 'app.' || (g % 50), md5('p' || (g % 50))::uuid,
                       md5('r' || g)::uuid, now(), 'Title', '', now() + make_interval(secs => g),
                       ARRAY[md5('d' || g)::uuid], CASE WHEN g % 10 = 0 THEN 'scheduled' ELSE 'sent' END, now()
                  FROM generate_series(1, 40000) g
                """)
            // A host retrying with keys: half the reminders carry one.
            _ = try c.query(
                "UPDATE reminders SET idempotency_key = 'key-' || id, body_hash = md5(id::text) WHERE at < now() + interval '20000 seconds'"
            )
            for table in ["partners", "users", "devices", "opt_outs", "deliveries", "reminders"] {
                try c.execute("ANALYZE \(table)")
            }
            return db
        } catch {
            fatalError("cannot build the reminder query-plan fixture: \(error)")
        }
    }()

    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        try Self.database.connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }
            .joined(separator: "\n")
    }

    /// A statement of a function with its arguments (and `INTO` targets) replaced, so the test EXPLAINs
    /// what the function runs.
    func statement(of function: String, from start: String, renaming names: [String: String]) throws -> String {
        try functionStatement(function, on: Self.database.connection, from: start, renaming: names)
    }

    @Test("the user's list reads the scheduled reminders of that user through reminders_scheduled")
    func list() throws {
        let text = try plan(Queries.Reminders.pending.text, ["u42"])
        #expect(text.contains("reminders_scheduled"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("the cap's count and the marking of sent reminders read one user's mini-app through reminders_scheduled")
    func cap() throws {
        let names = ["p_user": "$1", "p_mini_app": "$2", "INTO v_pending": ""]
        let count = try plan(
            try statement(
                of: "herald_schedule_reminder", from: "SELECT count(*) INTO v_pending",
                renaming: names), ["u42", "app.42"])
        #expect(count.contains("reminders_scheduled"), "\(count)")
        #expect(!count.contains("Seq Scan"), "\(count)")
        let settle = try plan(
            try statement(of: "herald_schedule_reminder", from: "UPDATE reminders r", renaming: names),
            ["u42", "app.42"])
        #expect(settle.contains("reminders_scheduled"), "\(settle)")
        #expect(!settle.contains("Seq Scan"), "\(settle)")
    }

    @Test("whether a reminder is pending, and the cancel's lock of its deliveries, probe the outbox's primary key")
    func outbox() throws {
        let ids = ["{\(UUID()),\(UUID())}"]
        let pending = try plan(
            try statement(
                of: "herald_reminder_pending", from: "SELECT",
                renaming: ["p_deliveries": "$1::uuid[]"]), ids)
        #expect(pending.contains("deliveries_pkey"), "\(pending)")
        #expect(!pending.contains("Seq Scan"), "\(pending)")
        let lock = try plan(
            try statement(
                of: "herald_cancel_reminder", from: "SELECT 1 FROM deliveries d",
                renaming: ["v_reminder.deliveries": "$1::uuid[]", "FOR UPDATE) AS x": "FOR UPDATE"]),
            ids)
        #expect(lock.contains("deliveries_pkey"), "\(lock)")
        #expect(!lock.contains("Seq Scan"), "\(lock)")
    }

    @Test("the schedule's lookups probe the active mini-app index and the directory's primary keys")
    func lookup() throws {
        let partner = try plan(Queries.Partners.findActiveByMiniApp.text, ["app.7"])
        #expect(partner.contains("partners_active_mini_app"), "\(partner)")
        #expect(!partner.contains("Seq Scan"), "\(partner)")
        let audience = try plan(Queries.Reminders.audience.text, ["u42", "app.7"])
        // One probe of a unique index on the user's id: which of the two depends on the visibility map (an index-only
        // scan pays off once the table is vacuumed), so either is the plan this test asks for.
        #expect(
            audience.contains("using users_id_tenant_id_key on users")
                || audience.contains("using users_pkey on users"),
            "\(audience)")
        #expect(audience.contains("devices_pkey"), "\(audience)")
        #expect(audience.contains("opt_outs_pkey"), "\(audience)")
        #expect(!audience.contains("Seq Scan"), "\(audience)")
    }

    @Test("a keyed schedule's lookups, before and inside the schedule, probe reminders_idempotency")
    func idempotencyKey() throws {
        let keyed = try plan(Queries.Reminders.keyed.text, ["u42", "key-42"])
        #expect(keyed.contains("reminders_idempotency"), "\(keyed)")
        #expect(!keyed.contains("Seq Scan"), "\(keyed)")
        let inside = try plan(
            try statement(
                of: "herald_schedule_reminder", from: "SELECT r.id, r.body_hash",
                renaming: ["p_user": "$1", "p_key": "$2", "INTO v_keyed": ""]),
            ["u42", "key-42"])
        #expect(inside.contains("reminders_idempotency"), "\(inside)")
        #expect(!inside.contains("Seq Scan"), "\(inside)")
    }

    @Test("the janitor finds reminders past their retention through reminders_at")
    func retention() throws {
        let text = try plan(Queries.Maintenance.deleteFinishedReminders.text, [5000])
        #expect(text.contains("reminders_at"), "\(text)")
    }
}
