import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The index each hot query relies on, proven with EXPLAIN on a directory large enough that the
/// planner would not pick an index by accident (see docs/database.md, "Indexes and why").
@Suite("Query plans", .serialized, .requiresDatabase)
struct QueryPlanTests {
    static let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    /// A tenant with 20,000 users, each with an email, a wallet and a device; analysed.
    static let tenant: String = {
        let tenant = TestEnvironment.unique("plans")
        do {
            try StoreDatabase.migrate(pool)
            try pool.withTransaction { connection in
                _ = try connection.query("INSERT INTO tenants (id) VALUES ($1)", [tenant])
                _ = try connection.query(
                    """
                    INSERT INTO users (id, tenant_id) SELECT $1 || '-' || g, $1 FROM generate_series(1, 20000) g
                    """, [tenant])
                _ = try connection.query(
                    """
                    INSERT INTO user_emails (tenant_id, email, user_id)
                    SELECT $1, 'user' || g || '@' || $1 || '.example', $1 || '-' || g FROM generate_series(1, 20000) g
                    """, [tenant])
                _ = try connection.query(
                    """
                    INSERT INTO user_wallets (tenant_id, wallet, user_id)
                    SELECT $1, '0x' || lpad(to_hex(g), 40, '0'), $1 || '-' || g FROM generate_series(1, 20000) g
                    """, [tenant])
                // The small tables of the hot path get realistic sizes too, or the planner rightly
                // prefers a sequential scan of a handful of rows. Rate buckets lie ahead of the clock:
                // past ones would be cleaned by the janitor of an intake another suite runs.
                _ = try connection.query(
                    """
                    INSERT INTO opt_outs (user_id, mini_app_id)
                    SELECT $1 || '-' || g, 'app.' || (g % 50) FROM generate_series(1, 20000) g
                    """, [tenant])
                _ = try connection.query(
                    """
                    INSERT INTO idempotency_keys (partner_id, key, body_hash, request_id, response, created_at)
                    SELECT gen_random_uuid(), 'k' || g, 'h', gen_random_uuid(), '{}', now() FROM generate_series(1, 20000) g
                    """)
                _ = try connection.query(
                    """
                    INSERT INTO rate_buckets (partner_id, granularity, bucket, count)
                    SELECT gen_random_uuid(), 's', extract(epoch FROM now())::bigint + 3600 + g, 1
                      FROM generate_series(1, 20000) g
                    """)
                _ = try connection.query(
                    """
                    INSERT INTO rate_windows (partner_id, minute_edge, minute_count, day_edge, day_count)
                    SELECT gen_random_uuid(), 0, 1, 0, 1 FROM generate_series(1, 20000) g
                    """)
                _ = try connection.query(
                    """
                    INSERT INTO devices (user_id, device_id, platform, environment, apns_token)
                    SELECT $1 || '-' || g, 'phone', 'ios', 'production', repeat('ab', 32) FROM generate_series(1, 20000) g
                    """, [tenant])
            }
            try pool.withConnection { connection in
                for table in [
                    "users", "user_emails", "user_wallets", "devices", "opt_outs", "idempotency_keys",
                    "rate_buckets", "rate_windows", "push_requests",
                ] {
                    try connection.execute("ANALYZE \(table)")
                }
            }
        } catch {
            fatalError("cannot build the query-plan fixture: \(error)")
        }
        return tenant
    }()

    /// The plan of `sql` with `parameters`, as text (EXPLAIN runs the statement's planning only).
    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        _ = Self.tenant  // the fixture also migrates the database
        return try Self.pool.withConnection { connection in
            try connection.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
    }

    /// The plan of `sql` under `settings` (SET statements, undone with the transaction they run in).
    func plan(_ sql: NamedSQL, _ parameters: [(any PostgresEncodable)?], settings: String) throws -> String {
        _ = Self.tenant
        return try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try connection.execute(settings)
            return try connection.plan(sql, parameters)
        }
    }

    /// The query after `RETURN QUERY` in the plpgsql function `name`, as the database has it.
    func returnedQuery(of name: String) throws -> String {
        try Self.pool.withConnection { try functionStatement(name, on: $0, from: "RETURN QUERY", afterStart: true) }
    }

    @Test(
        "the resolver's query (every push's: the intake batch's, the backfill's, the single push's), planned generic as the intake's function runs it, probes primary keys only"
    )
    func resolve() throws {
        let tenant = Self.tenant
        let query = try Self.pool.withConnection {
            try functionStatement(
                "herald_resolve_lines", on: $0, from: "WITH ids AS",
                to: "fcm_token_invalidated_at IS NULL))", throughEnd: true,
                renaming: [
                    "p_tenants": "$1", "p_mini_apps": "$2", "p_e_line": "$3", "p_emails": "$4", "p_w_line": "$5",
                    "p_wallets": "$6",
                ])
        }
        let name = "resolve_lines_plan_\(UUID().uuidString.prefix(8).lowercased())"
        let text = try Self.pool.withConnection { connection in
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            defer { _ = try? connection.execute("RESET plan_cache_mode; DEALLOCATE \(name)") }
            try connection.execute("PREPARE \(name) (text[], text[], integer[], text[], integer[], text[]) AS \(query)")
            return try connection.execute(
                """
                EXPLAIN EXECUTE \(name)('{\(tenant),\(tenant)}', '{app.1,app.1}', '{1,2}',
                    '{user17@\(tenant).example,user9000@\(tenant).example}', '{2}',
                    '{0x00000000000000000000000000000000000000ff}')
                """
            ).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("user_emails_pkey"), "\(text)")
        #expect(text.contains("user_wallets_pkey"), "\(text)")
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan on user_emails"), "\(text)")
        #expect(!text.contains("Seq Scan on user_wallets"), "\(text)")
        #expect(!text.contains("Seq Scan on devices"), "\(text)")
    }

    @Test("an icon is found through the active mini-app index, then the icons' primary key")
    func partnerIcon() throws {
        let tenant = Self.tenant
        // 5,000 partners with icons inside a transaction that is rolled back (the planner's statistics
        // with them), so other suites never see them.
        let text = try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            _ = try connection.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                      rate_limit_per_day, icon_updated_at)
                SELECT gen_random_uuid(), 'plans.icon.' || g, 'P', $1, 'plans-icon-' || $1 || '-' || g, 60, 1000, now()
                  FROM generate_series(1, 5000) g
                """, [tenant])
            _ = try connection.query(
                """
                INSERT INTO partner_icons (partner_id, size, png, sha256)
                SELECT p.id, v.size, '\\x00'::bytea, 'h'
                  FROM partners p, (VALUES (64), (128), (256)) AS v (size) WHERE p.tenant_id = $1
                """, [tenant])
            try connection.execute("ANALYZE partners")
            try connection.execute("ANALYZE partner_icons")
            return try connection.plan(Queries.PartnerIcons.find, ["plans.icon.77", 256])
        }
        #expect(text.contains("partners_active_mini_app"), "\(text)")
        #expect(text.contains("partner_icons_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test(
        "the webhook claim finds due and lease-expired events, and whether any is due, through their partial indexes, among many finished"
    )
    func webhookClaim() throws {
        _ = Self.tenant
        let plans = try Self.pool.withConnection { connection -> [String] in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            _ = try connection.query(
                """
                INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, state,
                                            available_at, finished_at)
                SELECT gen_random_uuid(), gen_random_uuid(), 'push.completed', gen_random_uuid(), '{}', now(), now(),
                       CASE WHEN g % 1000 = 0 THEN 'pending' ELSE 'delivered' END, now(), now()
                  FROM generate_series(1, 30000) g
                """)
            try connection.execute("ANALYZE webhook_events")
            // The two scans of herald_webhook_claim's `due` (sql/functions/webhook_claim.sql), as it runs them.
            return try [
                """
                SELECT e.id FROM webhook_events e WHERE e.state = 'pending' AND e.available_at <= now()
                   AND e.partner_id <> ALL ('{}'::uuid[]) ORDER BY e.available_at LIMIT 256
                """,
                """
                SELECT e.id FROM webhook_events e WHERE e.state = 'sending' AND e.lease_expires_at <= now()
                   AND e.partner_id <> ALL ('{}'::uuid[]) ORDER BY e.lease_expires_at LIMIT 256
                """,
                // Its first step, all an idle poll runs: whether anything is due at all.
                "SELECT 1 FROM webhook_events e WHERE e.state = 'pending' AND e.available_at <= now()",
                "SELECT 1 FROM webhook_events e WHERE e.state = 'sending' AND e.lease_expires_at <= now()",
            ].map { sql in
                try connection.query("EXPLAIN " + sql).rows.map { try $0.string(0) }.joined(separator: "\n")
            }
        }
        #expect(plans[0].contains("webhook_events_due"), "\(plans[0])")
        #expect(plans[1].contains("webhook_events_sending"), "\(plans[1])")
        #expect(plans[2].contains("webhook_events_due"), "\(plans[2])")
        #expect(plans[3].contains("webhook_events_sending"), "\(plans[3])")
    }

    @Test("the claim's returning query probes each member's device and opt-out, and each claimed row's partner once")
    func claimReturningQuery() throws {
        _ = Self.tenant
        // The query inside `herald_claim_deliveries` (sql/functions/claim_deliveries.sql), read from the database with
        // the claimed row versions as a parameter, EXPLAINed with the function's own planner settings.
        let query = try returnedQuery(of: "herald_claim_deliveries").replacingOccurrences(
            of: "v_claimed", with: "$1::tid[]"
        )
        // The host's guards' verdicts for the batch (functions/user_guards.sql), none here.
        .replacingOccurrences(of: "v_guard_ids", with: "('{}'::uuid[])")
        .replacingOccurrences(of: "v_guard_verdicts", with: "('{}'::text[])")
        .replacingOccurrences(of: "v_guard_until", with: "('{}'::timestamptz[])")
        let text = try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try connection.execute("SET LOCAL enable_seqscan = off")
            try connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            return try connection.query("EXPLAIN " + query, ["{\"(0,1)\",\"(0,2)\"}"]).rows
                .map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(text.contains("partners_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
        // The per-member subplan (the opt-out check) reads opt_outs alone: the partner is not looked up again.
        let subplans = try #require(text.range(of: "SubPlan"))
        #expect(!text[subplans.lowerBound...].contains("partners"), "\(text)")
    }

    @Test("the host's guards read the claimed rows by version, each user's quiet hours and window by an index probe")
    func userGuardsQueryPlan() throws {
        _ = Self.tenant
        // herald_user_guards' one query (sql/functions/user_guards.sql), as its claim runs it: a generic plan.
        let query = try returnedQuery(of: "herald_user_guards")
            .replacingOccurrences(of: "p_rows", with: "$1::tid[]")
            .replacingOccurrences(of: "p_max", with: "$2::integer")
            .replacingOccurrences(of: "v_quiet", with: "true")
        let text = try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try connection.execute("SET LOCAL enable_seqscan = off")
            try connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            return try connection.query("EXPLAIN " + query, ["{\"(0,1)\",\"(0,2)\"}", 3]).rows
                .map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("Tid Scan on deliveries"), "\(text)")
        #expect(text.contains("users_quiet_hours"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(text.contains("Insert on user_push_windows"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("the intake's write and the claim plan once and never JIT-compile, whatever the session's settings")
    func hotFunctionsNeverJIT() throws {
        _ = Self.tenant
        for name in ["herald_intake_push", "herald_claim_deliveries"] {
            let settings = try Self.pool.withConnection { connection in
                try connection.query("SELECT array_to_string(proconfig, ',') FROM pg_proc WHERE proname = $1", [name])
                    .rows.map { try $0.string(0) }
            }
            #expect(settings.count == 1, "\(name): \(settings)")
            #expect(settings.first?.contains("jit=off") == true, "\(name): \(settings)")
            #expect(settings.first?.contains("plan_cache_mode=force_generic_plan") == true, "\(name): \(settings)")
        }
    }

    @Test(
        "the claim of the rows a notification listed leases them by primary key, without walking the due index, and reads each one's device, partner and opt-out by primary key"
    )
    func claimListedRows() throws {
        // As the claimer's session plans it (Queries.WorkerSessions.claimSession: a generic plan, index paths only).
        let text = try plan(
            Queries.Deliveries.claimListed, ["w", 100, 30, "{apns,fcm}", "{\(UUID())}", 0],
            settings: Queries.WorkerSessions.claimSession.text)
        // Whether a row's user has quiet hours (the walk's claim judges those): the small partial index, no heap.
        #expect(text.contains("users_quiet_hours"), "\(text)")
        #expect(text.contains("deliveries_pkey"), "\(text)")
        #expect(!text.contains("deliveries_due"), "\(text)")
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("partners_pkey"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test(
        "the read of the rows an intake leased to a worker finds them by primary key, and each one's device, partner and opt-out by primary key"
    )
    func readLeasedRows() throws {
        // As the claimer's session plans it (Queries.WorkerSessions.claimSession), which runs it.
        let text = try plan(
            Queries.Deliveries.readLeased, ["w", "{\(UUID())}"],
            settings: Queries.WorkerSessions.claimSession.text)
        #expect(text.contains("deliveries_pkey"), "\(text)")
        #expect(!text.contains("deliveries_lease"), "\(text)")
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("partners_pkey"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
    }

    @Test("a push with a collapse key finds the older deliveries it supersedes through the collapse index")
    func supersededByCollapseID() throws {
        _ = Self.tenant
        let query = try Self.pool.withConnection { connection in
            try functionStatement(
                "herald_outbox_write", on: connection, from: "UPDATE deliveries o",
                renaming: [
                    "p_collapse": "($1::text[])", "p_created": "($2::timestamptz[])", "p_request": "($3::uuid[])",
                    "p_of": "($4::integer[])", "p_id": "$5::uuid[]", "p_device": "$6::text[]",
                    "p_only": "($7::integer[])",
                ])
        }
        let text = try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try connection.execute("SET LOCAL enable_seqscan = off")
            return try connection.query(
                "EXPLAIN " + query,
                [
                    "{\(String(repeating: "a", count: 64))}", "{\"2026-01-01 00:00:00+00\"}", "{\(UUID())}", nil,
                    "{\(UUID())}", "{phone}", nil,
                ]
            ).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("deliveries_collapse"), "\(text)")
        #expect(!text.contains("deliveries_due"), "\(text)")
    }

    @Test("the release of a worker's unheard leased rows walks the lease index, not the outbox")
    func releaseLeasedRows() throws {
        let text = try plan(
            Queries.Deliveries.releaseLeased, ["w", "{\(UUID())}"],
            settings: "SET LOCAL enable_seqscan = off")
        #expect(text.contains("deliveries_lease"), "\(text)")
        #expect(!text.contains("deliveries_due"), "\(text)")
    }

    @Test(
        "the claim finds the partners with due rows in one statement: a walk of the due index in partner order, then one probe each; registered partners without rows are not read"
    )
    func claimPartnersWithDueRows() throws {
        _ = Self.tenant
        // The partners statement inside `herald_claim_deliveries` (sql/functions/claim_deliveries.sql), read from the
        // database with its variables as parameters, EXPLAINed with the function's own planner settings.
        let query = try Self.pool.withConnection { connection in
            try functionStatement(
                "herald_claim_deliveries", on: connection, from: "WITH RECURSIVE known",
                renaming: [
                    "INTO v_partners, v_floors": "", "v_lane": "$1::smallint",
                    "p_cursor_lanes": "$2::smallint[]", "p_cursor_partners": "$3::uuid[]",
                    "p_cursor_times": "$4::timestamptz[]", "p_services": "$5::text[]",
                ])
        }
        let text = try Self.pool.withConnection { connection -> String in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            try connection.execute("SET LOCAL enable_seqscan = off")
            try connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            return try connection.query(
                "EXPLAIN " + query, [0, "{0}", "{\(UUID())}", "{\"2026-01-01 00:00:00+00\"}", "{apns,fcm}"]
            ).rows
                .map { try $0.string(0) }.joined(separator: "\n")
        }
        // The partners with pending rows and those with cursors, one index descent each (a recursive union of
        // limited scans), then per partner a probe that stops at its first due row (a nested loop over a limited
        // index scan).
        #expect(text.contains("Recursive Union"), "\(text)")
        #expect(text.contains("Nested Loop"), "\(text)")
        #expect(text.contains("Limit"), "\(text)")
        #expect(text.contains("Scan using deliveries_due_partner"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")
        #expect(!text.contains("Semi Join"), "\(text)")
        // Thousands of registered partners without rows cost nothing: the partners table is read only by the
        // suspension check, one primary-key probe per partner with a due row (a subplan after the due probe).
        #expect(!text.contains("Seq Scan on partners") && !text.contains("Bitmap Heap Scan on partners"), "\(text)")
        #expect(text.contains("SubPlan") && text.contains("Index Scan using partners_pkey on partners"), "\(text)")
    }

    @Test("the idempotency lookup uses the (partner, key) primary key")
    func idempotency() throws {
        let text = try plan(Queries.PushRequests.findIdempotentResponse.text, [UUID(), "key-1", Date()])
        #expect(text.contains("idempotency_keys_pkey"), "\(text)")
    }

    @Test("a request lookup by its UUIDv7 id searches one monthly partition only")
    func partitionPruning() throws {
        let id = UUIDv7.make(at: Date())
        let created = UUIDv7.timestamp(of: id)!
        let text = try plan(Queries.PushRequests.find.text, [id, created, created.addingTimeInterval(0.001)])
        let scanned = text.split(separator: "\n").filter { $0.contains(" on push_requests_") }
        #expect(scanned.count == 1, "\(text)")
        let partitions = try Self.pool.withConnection { connection in
            try connection.query("SELECT count(*) FROM pg_inherits WHERE inhparent = 'push_requests'::regclass").first!
                .int(0)
        }
        #expect(partitions >= 3)
    }

    @Test("the rate window sums read the bucket primary key")
    func rateBuckets() throws {
        let text = try plan(
            """
            SELECT coalesce(sum(count), 0) FROM rate_buckets
             WHERE partner_id = $1 AND granularity = 's' AND bucket > $2
            """, [UUID(), 1_795_000_000])
        #expect(text.contains("rate_buckets_pkey"), "\(text)")
    }
}

enum StoreDatabase {
    static func migrator() throws -> Migrator {
        try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
    }

    static func migrate(_ pool: PostgresPool) throws {
        let migrator = try migrator()
        try pool.withConnection { _ = try migrator.migrate($0) }
    }
}

/// The hot statements inside `herald_intake_push` (sql/functions/intake_push.sql), EXPLAINed as the
/// function runs them: generic plans (the function sets plan_cache_mode = force_generic_plan), on
/// the analysed fixture of `QueryPlanTests`.
@Suite("Query plans: intake push batch", .serialized, .requiresDatabase)
struct IntakePushQueryPlanTests {
    /// The generic plan of `sql` whose parameters have `types`.
    func genericPlan(_ sql: String, types: String) throws -> String {
        _ = QueryPlanTests.tenant
        return try QueryPlanTests.pool.withConnection { connection in
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            defer { _ = try? connection.execute("DEALLOCATE intake_plan; RESET plan_cache_mode") }
            try connection.execute("PREPARE intake_plan (\(types)) AS \(sql)")
            let nulls = Array(repeating: "NULL", count: types.split(separator: ",").count).joined(separator: ", ")
            return try connection.execute("EXPLAIN EXECUTE intake_plan (\(nulls))").rows.map { try $0.string(0) }
                .joined(separator: "\n")
        }
    }

    /// A statement of `function`'s source, from `start` to `end` (its `;`, or the `LOOP` of a
    /// FOR over a query), with its arguments renamed.
    func statement(
        of function: String = "herald_intake_push", from start: String, to endMarker: String = ";",
        renaming names: [String: String]
    ) throws -> String {
        _ = QueryPlanTests.tenant  // the fixture also migrates the database
        return try QueryPlanTests.pool.withConnection {
            try functionStatement(function, on: $0, from: start, to: endMarker, renaming: names)
        }
    }

    @Test("the batch's stored-answer lookup probes the (partner, key) primary key, never a scan")
    func storedAnswers() throws {
        let sql = try statement(
            from: "SELECT x.o, k.body_hash", to: "LOOP", renaming: ["p_partner": "$1", "p_key": "$2", "p_now": "$3"])
        let text = try genericPlan(sql, types: "uuid[], text[], timestamptz[]")
        #expect(text.contains("idempotency_keys_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan on idempotency_keys"), "\(text)")
    }

    @Test("the rate windows are read from their row and the bucket primary key")
    func rateWindows() throws {
        // herald_rate_counts' statements (sql/functions/rate_counts.sql): the row, then for a window whose edge moved
        // the range it passes, or the window summed whole.
        let names = [
            "INTO w": "", "INTO minute_count": "", "INTO day_count": "", "p_partner": "$1", "p_now": "$2",
            "w.minute_edge": "$3", "w.day_edge": "$3", "w.minute_count": "$4", "w.day_count": "$4",
        ]
        let plans = try [
            "SELECT r.minute_edge", "SELECT coalesce(sum(b.count), 0) INTO minute_count",
            "SELECT w.minute_count - coalesce", "SELECT coalesce(sum(b.count), 0) INTO day_count",
            "SELECT w.day_count - coalesce",
        ].map { start in
            try genericPlan(
                statement(of: "herald_rate_counts", from: start, renaming: names),
                types: "uuid, bigint, bigint, integer")
        }
        #expect(plans[0].contains("rate_windows_pkey"), "\(plans[0])")
        for text in plans.dropFirst() {
            #expect(text.contains("rate_buckets_pkey"), "\(text)")
            #expect(!text.contains("Seq Scan"), "\(text)")
        }
    }

    @Test("a refusal's oldest buckets are one descent of the bucket primary key each")
    func rateOldest() throws {
        let text = try genericPlan("SELECT * FROM herald_rate_oldest($1, $2)", types: "uuid, bigint")
        #expect(text.components(separatedBy: "rate_buckets_pkey").count == 3, "\(text)")
        #expect(!text.contains("Seq Scan on rate_buckets"), "\(text)")
    }
}
