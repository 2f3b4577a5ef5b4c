import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The partner key lookup every partner request makes on a cache miss (`Queries.Partners.findActive`) reads the two
/// unique indexes of sql/002_partners.sql and sql/045_partner_previous_key.sql, and the admin audit trail's pages
/// (sql/047_admin_audit.sql) their indexes, proven with EXPLAIN on a private database of 5,000 partners, half of
/// them in a rotation's overlap, and 25,000 audit entries.
@Suite("Partner key query plans", .serialized, .requiresDatabase)
struct PartnerQueryPlanTests {
    static let database: QueueDatabase = {
        do {
            let db = try QueueDatabase()
            _ = try db.connection.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                      rate_limit_per_day, previous_key_hash, previous_key_expires_at)
                SELECT md5('p' || g)::uuid, 'app.' || g, 'App', 't1', md5('key-' || g), 60, 10000,
                       CASE WHEN g % 2 = 0 THEN md5('previous-' || g) END,
                       CASE WHEN g % 2 = 0 THEN now() + interval '1 day' END
                  FROM generate_series(0, 4999) g
                """)
            // Each insert wrote its audit entry (functions/partners_audited.sql); more entries of other kinds.
            _ = try db.connection.query(
                """
                INSERT INTO admin_audit (actor, action, detail)
                SELECT 'console', 'console.signed_in', '{}' FROM generate_series(1, 20000)
                """)
            try db.connection.execute("ANALYZE partners")
            try db.connection.execute("ANALYZE admin_audit")
            return db
        } catch {
            fatalError("cannot build the partner query-plan fixture: \(error)")
        }
    }()

    @Test("the audit trail's pages read the primary key backwards, or one partner's through admin_audit_partner")
    func auditPages() throws {
        let c = Self.database.connection
        #expect(
            try c.query("SELECT count(*) FROM admin_audit WHERE action = 'partner.created'").rows[0].int(0) == 5_000)
        let all = try c.plan(Queries.AdminAudit.list, [nil as Int?, 100])
        #expect(all.contains("Index Scan Backward using admin_audit_pkey"), "\(all)")
        let paged = try c.plan(Queries.AdminAudit.list, [12_000, 100])
        #expect(paged.contains("admin_audit_pkey") && !paged.contains("Seq Scan"), "\(paged)")
        let partner = try c.plan(Queries.AdminAudit.listPartner, [nil as Int?, 100, UUID()])
        #expect(partner.contains("admin_audit_partner"), "\(partner)")
        #expect(!partner.contains("Seq Scan") && !partner.contains("Sort"), "\(partner)")
    }

    @Test("the key lookup is two unique-index scans, current key then previous key, and finds each")
    func keyLookup() throws {
        let c = Self.database.connection
        let text = try c.plan(Queries.Partners.findActive, ["0123"])
        #expect(text.contains("Index Scan using partners_key_hash_key on partners"), "\(text)")
        #expect(text.contains("Index Scan using partners_previous_key_hash_key on partners"), "\(text)")
        #expect(!text.contains("Seq Scan"), "\(text)")

        let pool = PostgresPool(configuration: .init(url: Self.database.url, maxConnections: 1))
        let store = PartnerStore(pool: pool)
        let current = try #require(try store.findActive(keyHash: try c.query("SELECT md5('key-42')").rows[0].string(0)))
        #expect(current.record.miniAppID == "app.42" && !current.previous)
        let previous = try #require(
            try store.findActive(keyHash: try c.query("SELECT md5('previous-42')").rows[0].string(0)))
        #expect(previous.record.miniAppID == "app.42" && previous.previous)
        #expect(try store.findActive(keyHash: try c.query("SELECT md5('previous-43')").rows[0].string(0)) == nil)
    }
}
