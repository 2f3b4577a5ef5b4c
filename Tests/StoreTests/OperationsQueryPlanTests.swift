import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The indexes `heraldctl replay` and `heraldctl stats` rely on (sql/010_operations.sql), proven with EXPLAIN
/// on a private database whose history holds 60,000 rows, 95% of them sent, across 300 requests and 3 partners,
/// and whose outbox holds 20,000 pending rows.
@Suite("Operations query plans", .serialized, .requiresDatabase)
struct OperationsQueryPlanTests {
    static let partners = (1...3).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0)")! }

    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            let c = db.connection
            _ = try c.execute(
                """
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts,
                                              last_error, created_at, finished_at, request_created_at, payload)
                SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((g % 300)::text, 12, '0'))::uuid,
                       ('00000000-0000-0000-0000-00000000000' || (1 + g % 3))::uuid, 0, 'apns', 'u' || g, 'd',
                       CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'sent' END, 1,
                       CASE WHEN g % 20 = 0 THEN 'BadCollapseId' END, now(), now() - make_interval(secs => g / 10.0), now(),
                       CASE WHEN g % 20 = 0 THEN '{}' END
                  FROM generate_series(1, 60000) g
                """)
            _ = try c.execute(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                        environment, payload, available_at)
                SELECT gen_random_uuid(), gen_random_uuid(), now(), ('00000000-0000-0000-0000-00000000000' || (1 + g % 3))::uuid,
                       g % 2, 'apns', 'u' || g, 'd', 'production', '{}', now() - make_interval(secs => g)
                  FROM generate_series(1, 20000) g
                """)
            try c.execute("ANALYZE delivery_history")
            try c.execute("ANALYZE deliveries")
            return db
        } catch {
            fatalError("cannot build the operations query-plan fixture: \(error)")
        }
    }()

    /// The plan, with each partition's index named by its parent index (the names sql/010_operations.sql gives).
    func plan(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> String {
        let c = Self.database.connection
        // As ReplayStore runs it: planned for the values given.
        try c.execute("SET plan_cache_mode = force_custom_plan")
        defer { _ = try? c.execute("RESET plan_cache_mode") }
        var text = try c.query("EXPLAIN " + sql, parameters).rows.map { try $0.string(0) }.joined(separator: "\n")
        let parents = try c.query(
            """
            SELECT child.relname, parent.relname FROM pg_inherits i
              JOIN pg_class child ON child.oid = i.inhrelid JOIN pg_class parent ON parent.oid = i.inhparent
             WHERE parent.relkind = 'I' AND parent.relname LIKE 'delivery_history%'
             ORDER BY length(child.relname) DESC
            """
        ).rows.map { (try $0.string(0), try $0.string(1)) }
        for (child, parent) in parents { text = text.replacingOccurrences(of: " \(child) ", with: " \(parent) ") }
        return text
    }

    /// True when history is read by an index: only empty partitions (cost 0) may be scanned.
    func noHistoryScan(_ text: String) -> Bool {
        text.split(separator: "\n").filter { $0.contains("Seq Scan on delivery_history") }
            .allSatisfy { $0.contains("cost=0.00..0.00") }
    }

    func replayPlan(_ selection: ReplaySelection, dryRun: Bool = true) throws -> String {
        let query = ReplayStore.batch(
            selection, after: (Date(timeIntervalSince1970: 0), UUID()), limit: 2_000, lane: 1, fallbackTTLSeconds: 60,
            dryRun: dryRun)
        return try plan(type(of: query).sql.text, query.bindings)
    }

    /// Every combination of the five selectors (at least one), for `replayPlan`.
    static let selections: [ReplaySelection] = (1..<32).map { bits in
        var selection = ReplaySelection()
        if bits & 1 != 0 { selection.requestIDs = [UUID(uuidString: "00000000-0000-7000-8000-000000000007")!] }
        if bits & 2 != 0 { selection.partnerIDs = [partners[1]] }
        if bits & 4 != 0 { selection.since = Date().addingTimeInterval(-600) }
        if bits & 8 != 0 { selection.until = Date().addingTimeInterval(-60) }
        if bits & 16 != 0 { selection.reason = "BadCollapseId" }
        return selection
    }

    @Test("every combination of replay selectors, run or dry, reads history by its index, the others folded away")
    func everyCombination() throws {
        for selection in Self.selections {
            for dryRun in [true, false] {
                let text = try replayPlan(selection, dryRun: dryRun)
                // A selector not given leaves no trace in the plan: its condition folded away.
                #expect(!text.contains("IS NULL) OR"), "\(selection) dryRun \(dryRun): \(text)")
                let byReplayable = text.contains("using delivery_history_replayable")
                if selection.requestIDs.isEmpty {
                    #expect(byReplayable, "\(selection): \(text)")
                } else {
                    #expect(text.contains(" delivery_history_request ") || byReplayable, "\(selection): \(text)")
                }
            }
        }
    }

    @Test("replay by request reads delivery_history_request")
    func byRequest() throws {
        var selection = ReplaySelection()
        selection.requestIDs = [UUID(uuidString: "00000000-0000-7000-8000-000000000007")!]
        for dryRun in [true, false] {
            let text = try replayPlan(selection, dryRun: dryRun)
            #expect(text.contains(" delivery_history_request "), "\(text)")
            #expect(noHistoryScan(text), "\(text)")
        }
    }

    @Test(
        "replay by partner reads a partial replayable index (by partner, or by time with the partner as filter), never the sent rows"
    )
    func byPartner() throws {
        var selection = ReplaySelection()
        selection.partnerIDs = [Self.partners[1]]
        let text = try replayPlan(selection)
        #expect(
            text.contains("using delivery_history_replayable_partner ")
                || text.contains("using delivery_history_replayable "),
            "\(text)")
        #expect(noHistoryScan(text), "\(text)")
    }

    @Test("replay by time window or reason reads the partial replayable index")
    func byTime() throws {
        var selection = ReplaySelection()
        selection.since = Date().addingTimeInterval(-600)
        selection.reason = "BadCollapseId"
        let text = try replayPlan(selection, dryRun: false)
        #expect(text.contains("using delivery_history_replayable "), "\(text)")
        #expect(noHistoryScan(text), "\(text)")
    }

    @Test("stats' outcomes of the last hour read the BRIN index on finished_at")
    func outcomes() throws {
        let text = try plan(Queries.Stats.outcomes.text, [300, 3_600])
        #expect(text.contains("Bitmap Index Scan on delivery_history_finished "), "\(text)")
        #expect(noHistoryScan(text), "\(text)")
    }

    @Test("tokens' window of invalidations reads the partial token_invalid index, never the sent rows")
    func tokenReportPlan() throws {
        let text = try plan(Queries.TokenReports.report.text, [Date().addingTimeInterval(-86_400), Date()])
        #expect(text.contains("delivery_history_token_invalid"), "\(text)")
        #expect(noHistoryScan(text), "\(text)")
    }

    @Test("stats' oldest due row comes from the queue heads: probes of deliveries_due_partner")
    func oldestDue() throws {
        let heads = try Self.database.connection.query(
            "SELECT prosrc FROM pg_proc WHERE proname = 'herald_queue_heads'"
        )
        .first!.string(0)
        let from = heads.range(of: "WITH RECURSIVE")!.lowerBound
        let head = String(heads[from..<heads[from...].firstIndex(of: ";")!])
        let text = try plan(head, [])
        #expect(text.contains("deliveries_due_partner"), "\(text)")
        #expect(!text.contains("Seq Scan on deliveries"), "\(text)")
        #expect(Queries.Stats.oldestDue.text.contains("herald_queue_heads()"))
    }
}
