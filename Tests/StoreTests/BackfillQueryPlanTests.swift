import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The plan of the backfill's per-batch key check (sql/functions/backfill_apply.sql) on 20,000 line keys: index
/// probes per line, never a scan, so a batch costs the same however large the key table grows. Its resolution is
/// every push's (`QueryPlanTests.resolve`).
@Suite("Backfill query plans", .serialized, .requiresDatabase)
struct BackfillQueryPlanTests {
    static var pool: PostgresPool { QueryPlanTests.pool }

    static let keysLoaded: Bool = {
        _ = QueryPlanTests.tenant
        do {
            try pool.withConnection { connection in
                _ = try connection.query(
                    """
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
            try connection.plan(
                Queries.Backfill.takenKeys,
                [
                    [1, 2], [UUID(uuidString: "00000000-0000-4000-8000-0000000000b1")!, UUID()], ["plan-key-7", "x"],
                    UUID(),
                ])
        }
        #expect(text.contains("backfill_keys_pkey"), "\(text)")
        #expect(!text.contains("Seq Scan on backfill_keys"), "\(text)")
    }
}
