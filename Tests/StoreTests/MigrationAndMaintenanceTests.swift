import Foundation
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

@Suite("Migrations and maintenance", .requiresDatabase)
struct MigrationAndMaintenanceTests {
    /// A fresh, empty database on the test server, dropped afterwards.
    static func withFreshDatabase(_ body: (String) throws -> Void) throws {
        let name = "herald_" + UUID().uuidString.prefix(8).lowercased()
        let admin = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
        defer { admin.close() }
        try admin.withConnection { try $0.execute("CREATE DATABASE \(name)") }
        defer { _ = try? admin.withConnection { try $0.execute("DROP DATABASE \(name) WITH (FORCE)") } }
        try body(TestEnvironment.databaseURL(named: name))
    }

    @Test("migrating twice applies each file once and records its checksum")
    func idempotent() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            let migrator = try StoreDatabase.migrator()
            let first = try pool.withConnection { try migrator.migrate($0) }
            let second = try pool.withConnection { try migrator.migrate($0) }
            // A fresh database runs the baseline instead of the legacy chain it replaces.
            let numbered = migrator.migrations.filter { !migrator.isLegacy($0) }
            #expect(first.count == 1 + numbered.count + migrator.definitions.count)
            #expect(first.count >= 4)
            #expect(second.isEmpty)
            let recorded = try pool.withConnection {
                try $0.query("SELECT count(*) FROM schema_migrations").first!.int(0)
            }
            #expect(recorded == 1 + numbered.count)
        }
    }

    @Test("an applied migration that was edited is refused, not re-run")
    func editedMigration() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            let original = Migrator(migrations: [.init(version: 1, name: "001_x.sql", sql: "CREATE TABLE x (a int)")])
            let edited = Migrator(migrations: [.init(version: 1, name: "001_x.sql", sql: "CREATE TABLE x (a bigint)")])
            try pool.withConnection { _ = try original.migrate($0) }
            #expect(throws: Migrator.Failure.self) { try pool.withConnection { _ = try edited.migrate($0) } }
        }
    }

    @Test("partitions are created ahead and dropped past retention")
    func partitions() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            try StoreDatabase.migrate(pool)
            let maintenance = MaintenanceStore(pool: pool)
            try maintenance.ensurePartitions(monthsAhead: 6)
            let names = try maintenance.listPartitions().map(\.partition)
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy_MM"
            formatter.timeZone = TimeZone(identifier: "UTC")
            let sixAhead = Calendar(identifier: .gregorian).date(byAdding: .month, value: 6, to: Date())!
            #expect(names.contains("push_requests_\(formatter.string(from: sixAhead))"))
            #expect(names.contains("delivery_history_\(formatter.string(from: sixAhead))"))

            try pool.withConnection {
                _ = try $0.query(
                    "SELECT herald_ensure_monthly_partitions('push_requests', '2020-01-15'::timestamptz, 1)")
            }
            #expect(try maintenance.listPartitions().contains { $0.partition == "push_requests_2020_01" })
            let dropped = try maintenance.dropPartitions(retentionDays: 400)
            #expect(dropped == ["push_requests_2020_01"])
            #expect(try maintenance.listPartitions().contains { $0.partition.hasPrefix("push_requests_") })
        }
    }

    @Test("the history's member arrays and payload keep no statistics, in partitions made later too")
    func columnsWithoutStatistics() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            try StoreDatabase.migrate(pool)
            try pool.withConnection {
                _ = try $0.query(
                    "SELECT herald_ensure_monthly_partitions('delivery_history', '2031-03-15'::timestamptz, 1)")
            }
            // Statistics targets of the history's columns no query searches (sql/023), and of one that is searched;
            // the outbox keeps the default everywhere.
            func targets(_ table: String) throws -> [String: Int] {
                let result = try pool.withConnection {
                    try $0.query(
                        """
                        SELECT attname, attstattarget FROM pg_attribute
                         WHERE attrelid = $1::regclass AND attname IN ('payload', 'members', 'member_users', 'member_devices',
                                                                      'member_payloads', 'partner_id')
                        """, [table])
                }
                return Dictionary(uniqueKeysWithValues: try result.rows.map { (try $0.string(0), try $0.int(1)) })
            }
            #expect(
                try targets("deliveries") == [
                    "payload": -1, "members": -1, "member_users": -1, "member_devices": -1,
                    "member_payloads": -1, "partner_id": -1,
                ])
            let history = ["payload": 0, "members": 0, "member_users": 0, "member_devices": 0, "partner_id": -1]
            #expect(try targets("delivery_history") == history)
            #expect(try targets("delivery_history_2031_03") == history)
            // Another parent's new partitions keep the default targets.
            try pool.withConnection {
                _ = try $0.query(
                    "SELECT herald_ensure_monthly_partitions('push_requests', '2031-03-15'::timestamptz, 1)")
            }
            let pushTargets = try pool.withConnection {
                try $0.query(
                    """
                    SELECT count(*) FROM pg_attribute
                     WHERE attrelid = 'push_requests_2031_03'::regclass AND attnum > 0 AND attstattarget <> -1
                    """
                ).first!.int(0)
            }
            #expect(pushTargets == 0)
        }
    }

    @Test("the outbox fills its pages whole and keeps its autovacuum settings (sql/024)")
    func outboxStorage() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            try StoreDatabase.migrate(pool)
            let options = try pool.withConnection {
                try $0.query(
                    "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = 'deliveries'::regclass"
                ).first!.string(0)
            }
            let set = Set(options.split(separator: ",").map(String.init))
            #expect(set.contains("fillfactor=100"), "\(options)")
            #expect(
                set.isSuperset(of: ["autovacuum_vacuum_scale_factor=0.01", "autovacuum_vacuum_cost_delay=0"]),
                "\(options)")
        }
    }

    @Test("cleaning removes expired rate buckets and idempotency keys only")
    func cleaning() throws {
        try Self.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            try StoreDatabase.migrate(pool)
            let partner = UUID()
            try pool.withConnection { connection in
                _ = try connection.query(
                    """
                    INSERT INTO rate_buckets VALUES
                      ($1, 's', extract(epoch FROM now())::bigint, 1), ($1, 's', extract(epoch FROM now())::bigint - 600, 1),
                      ($1, 'm', extract(epoch FROM now())::bigint / 60, 1), ($1, 'm', extract(epoch FROM now())::bigint / 60 - 2000, 1)
                    """, [partner])
                _ = try connection.query(
                    """
                    INSERT INTO idempotency_keys VALUES ($1, 'old', 'h', $2, '{}', now() - interval '26 hours'),
                                                        ($1, 'new', 'h', $2, '{}', now())
                    """, [partner, UUID()])
            }
            try MaintenanceStore(pool: pool).cleanExpired()
            let buckets = try pool.withConnection { try $0.query("SELECT count(*) FROM rate_buckets").first!.int(0) }
            let keys = try pool.withConnection {
                try $0.query("SELECT key FROM idempotency_keys").rows.map { try $0.string(0) }
            }
            #expect(buckets == 2)
            #expect(keys == ["new"])
        }
    }
}
