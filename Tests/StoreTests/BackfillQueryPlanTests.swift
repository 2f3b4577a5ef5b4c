import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The plans of the backfill's per-batch reads (sql/011_backfill.sql), on the 20,000-user
/// directory of `QueryPlanTests` and 20,000 line keys: index probes per line, never a scan, so a
/// batch costs the same however large the directory and the key table grow.
@Suite("Backfill query plans", .serialized, .requiresDatabase)
struct BackfillQueryPlanTests {
    static var pool: PostgresPool { QueryPlanTests.pool }

    static let keysLoaded: Bool = {
        _ = QueryPlanTests.tenant
        do {
            try pool.withConnection { connection in
                _ = try connection.query("""
                    INSERT INTO backfill_keys (partner_id, key, request_id, run_id, line, created_at)
                    SELECT '00000000-0000-4000-8000-0000000000b1', 'plan-key-' || g, gen_random_uuid(), gen_random_uuid(),
                           g, now()
                      FROM generate_series(1, 20000) g ON CONFLICT DO NOTHING
                    """)
                try connection.execute("ANALYZE backfill_keys")
            }
        } catch {
            fatalError("cannot build the backfill plan fixture: \(error)")
        }
        return true
    }()

    @Test("the taken-keys check probes the (partner, key) primary key")
    func takenKeys() throws {
        _ = Self.keysLoaded
        let text = try Self.pool.withConnection { connection in
            try connection.query("EXPLAIN " + BackfillStore.takenKeysSQL, [
                [1, 2], [UUID(uuidString: "00000000-0000-4000-8000-0000000000b1")!, UUID()], ["plan-key-7", "x"], UUID(),
            ]).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("backfill_keys_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan on backfill_keys"), "\(text)")
    }

    @Test("the batch resolver's query, planned as the function runs it (generic plan), probes primary keys only")
    func resolve() throws {
        _ = Self.keysLoaded
        let tenant = QueryPlanTests.tenant
        let query = try Self.pool.withConnection {
            try functionStatement("herald_backfill_resolve", on: $0, from: "RETURN QUERY", afterStart: true, renaming: [
                "p_lines": "$1", "p_tenants": "$2", "p_mini_apps": "$3", "p_kinds": "$4", "p_idents": "$5",
            ])
        }
        let name = "backfill_resolve_plan_\(UUID().uuidString.prefix(8).lowercased())"
        let text = try Self.pool.withConnection { connection in
            try connection.execute("SET plan_cache_mode = force_generic_plan")
            defer { _ = try? connection.execute("RESET plan_cache_mode; DEALLOCATE \(name)") }
            try connection.execute("PREPARE \(name) (integer[], text[], text[], text[], text[]) AS \(query)")
            return try connection.execute("""
                EXPLAIN EXECUTE \(name)('{1,2,3}', '{\(tenant),\(tenant),\(tenant)}', '{app.1,app.1,app.1}', '{e,e,w}',
                    '{user17@\(tenant).example,user9000@\(tenant).example,0x00000000000000000000000000000000000000ff}')
                """).rows.map { try $0.string(0) }.joined(separator: "\n")
        }
        #expect(text.contains("user_emails_pkey"), "\(text)")
        #expect(text.contains("user_wallets_pkey"), "\(text)")
        #expect(text.contains("devices_pkey"), "\(text)")
        #expect(text.contains("opt_outs_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan on user_emails"), "\(text)")
        #expect(!text.contains("Seq Scan on user_wallets"), "\(text)")
        #expect(!text.contains("Seq Scan on devices"), "\(text)")
    }
}
