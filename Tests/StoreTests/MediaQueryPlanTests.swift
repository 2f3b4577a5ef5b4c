import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The indexes the media queries rely on (sql/060_media.sql), proven with EXPLAIN among many rows: a served file
/// and a push's lookup probe the key, an upload counts the partner's live media on its index, and the janitor walks
/// the expiry index.
@Suite("Media query plans", .serialized, .requiresDatabase)
struct MediaQueryPlanTests {
    static let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 2))

    /// EXPLAIN of each statement with 20,000 media of 200 partners, inside a transaction rolled back.
    static func plans(_ body: (PostgresConnection, UUID) throws -> [String]) throws -> [String] {
        try StoreDatabase.migrate(pool)
        return try pool.withConnection { connection in
            try connection.execute("BEGIN")
            defer { _ = try? connection.execute("ROLLBACK") }
            let tenant = TestEnvironment.unique("media-plans")
            _ = try connection.query("INSERT INTO tenants (id) VALUES ($1)", [tenant])
            _ = try connection.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                      rate_limit_per_day)
                SELECT gen_random_uuid(), 'plans.media.' || g, 'P', $1, 'plans-media-' || $1 || '-' || g, 60, 1000
                  FROM generate_series(1, 200) g
                """, [tenant])
            _ = try connection.query(
                """
                INSERT INTO media (id, partner_id, content_type, bytes, sha256, created_at, expires_at)
                SELECT gen_random_uuid(), p.id, 'image/png', '\\x00'::bytea, 'h', now(), now() + g * interval '1 minute'
                  FROM partners p, generate_series(1, 100) g WHERE p.tenant_id = $1
                """, [tenant])
            try connection.execute("ANALYZE media")
            let partner = try #require(
                try connection.query("SELECT id FROM partners WHERE tenant_id = $1 LIMIT 1", [tenant]).first?.uuid(0))
            return try body(connection, partner)
        }
    }

    @Test("find and attach probe media_pkey, insert counts on media_partner_expires, the janitor walks media_expires")
    func indexes() throws {
        let plans = try Self.plans { connection, partner in
            let id = UUID()
            return [
                try connection.plan(Queries.Media.find, [id]),
                try connection.plan(Queries.Media.attach, [id, partner, Date()]),
                try connection.plan(Queries.Media.insert, [id, partner, "image/png", "\\x00", "h", 3_600, 1_000]),
                try connection.plan(Queries.Maintenance.deleteExpiredMedia, [5_000]),
            ]
        }
        #expect(plans[0].contains("media_pkey") && !plans[0].contains("Seq Scan"), "\(plans[0])")
        #expect(plans[1].contains("media_pkey") && !plans[1].contains("Seq Scan"), "\(plans[1])")
        #expect(plans[2].contains("media_partner_expires") && !plans[2].contains("Seq Scan"), "\(plans[2])")
        #expect(plans[3].contains("media_expires") && !plans[3].contains("Seq Scan on media"), "\(plans[3])")
    }
}
