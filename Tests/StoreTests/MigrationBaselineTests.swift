import Foundation
import HeraldTestSupport
import Postgres
import Store
import Testing

/// The baseline (`sql/baseline/`) and the legacy chain it replaces (Sources/Store/Migrator.swift): a fresh
/// database, one migrated through the whole legacy chain, and databases left by earlier releases all reach
/// the same schema. The earlier releases are fixtures in `Fixtures/`: the database that the Migrator of
/// commit 6333288 (migrations up to 026, no definition files) and of 4ac392f (up to 047, with them) left,
/// bookkeeping rows included, as `pg_dump --inserts` printed it (`Fixtures/make-fixture` writes them).
@Suite("Migrations: the baseline and the legacy chain", .requiresDatabase)
struct MigrationBaselineTests {
    static let fixtures = TestEnvironment.repositoryRoot.appendingPathComponent("Tests/StoreTests/Fixtures")

    /// `pg_dump --schema-only` without what differs between equal schemas: comments, `SET` lines, blank lines.
    static func normalizedSchema(of url: String) throws -> String {
        try MigrationLayoutTests.schema(of: url).split(separator: "\n")
            .filter { !$0.hasPrefix("--") && !$0.hasPrefix("SET ") && !$0.contains("pg_catalog.set_config") }
            .joined(separator: "\n")
    }

    /// The monthly partitions of a database.
    static func partitions(_ pool: PostgresPool) throws -> Set<String> {
        let rows = try pool.withConnection {
            try $0.query(
                """
                SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                 WHERE c.relkind = 'r' AND i.inhparent IN (SELECT oid FROM pg_class WHERE relkind = 'p')
                """
            ).rows
        }
        return Set(try rows.map { try $0.string("relname") })
    }

    /// Makes the partitions of `names` that a database lacks, as `heraldctl partitions` would: databases made
    /// in different months hold different ones.
    static func addPartitions(_ pool: PostgresPool, _ names: Set<String>) throws {
        for name in try names.subtracting(partitions(pool)).sorted() {
            let month = try #require(name.wholeMatch(of: /(.+)_(\d{4})_(\d{2})/))
            try pool.withConnection {
                _ = try $0.query(
                    "SELECT herald_ensure_monthly_partitions($1, $2::timestamptz, 1)",
                    [String(month.1), "\(month.2)-\(month.3)-01 00:00:00+00"])
            }
        }
    }

    /// Runs `body` with the URLs and pools of two fresh databases.
    static func withTwoDatabases(_ body: (String, PostgresPool, String, PostgresPool) throws -> Void) throws {
        try MigrationLayoutTests.withDatabase { firstURL, first in
            try MigrationLayoutTests.withDatabase { secondURL, second in
                try body(firstURL, first, secondURL, second)
            }
        }
    }

    /// The normalised schemas of two migrated databases, each given the partitions the other holds.
    static func schemas(
        _ firstURL: String, _ first: PostgresPool,
        _ secondURL: String, _ second: PostgresPool
    ) throws -> (String, String) {
        let all = try partitions(first).union(partitions(second))
        try addPartitions(first, all)
        try addPartitions(second, all)
        return (try normalizedSchema(of: firstURL), try normalizedSchema(of: secondURL))
    }

    @Test("a fresh database applies the baseline and the definitions, and is recorded at the baseline's version")
    func freshDatabase() throws {
        let migrator = try MigrationLayoutTests.bundled()
        let baseline = try #require(migrator.baseline)
        #expect(baseline.name == "baseline/053_baseline.sql")
        #expect(migrator.migrations.filter(migrator.isLegacy).map(\.version) == Array(1...baseline.version))
        try MigrationLayoutTests.withDatabase { _, pool in
            let applied = try pool.withConnection { try migrator.migrate($0) }
            #expect(applied.first == baseline.name)
            let legacyNames = Set(migrator.migrations.filter(migrator.isLegacy).map(\.name))
            #expect(applied.allSatisfy { !legacyNames.contains($0) })
            let recorded = try pool.withConnection {
                try $0.query("SELECT version, name FROM schema_migrations ORDER BY version").rows
            }
            #expect(try recorded.first.map { try $0.int("version") } == baseline.version)
            #expect(try recorded.first.map { try $0.string("name") } == baseline.name)
            #expect(try pool.withConnection { try migrator.migrate($0) }.isEmpty)
        }
    }

    @Test("a database migrated through the whole legacy chain from empty has the schema of a fresh one")
    func legacyChainFromEmpty() throws {
        let migrator = try MigrationLayoutTests.bundled()
        let legacyOnly = Migrator(migrations: migrator.migrations, definitions: migrator.definitions)
        try Self.withTwoDatabases { freshURL, fresh, legacyURL, legacy in
            try fresh.withConnection { _ = try migrator.migrate($0) }
            let applied = try legacy.withConnection { try legacyOnly.migrate($0) }
            #expect(applied == migrator.migrations.map(\.name) + migrator.definitions.map(\.path))
            let (freshSchema, legacySchema) = try Self.schemas(freshURL, fresh, legacyURL, legacy)
            #expect(legacySchema == freshSchema)
        }
    }

    @Test(
        "a database of an earlier release upgrades through the legacy chain to the schema of a fresh one",
        arguments: [("schema-026.sql", 26), ("schema-047.sql", 47)])
    func earlierRelease(fixture: String, version: Int) throws {
        let migrator = try MigrationLayoutTests.bundled()
        let dump = try String(contentsOf: Self.fixtures.appendingPathComponent(fixture), encoding: .utf8)
        try Self.withTwoDatabases { freshURL, fresh, oldURL, old in
            try fresh.withConnection { _ = try migrator.migrate($0) }
            // On a connection of its own, closed at the end of the scope: the dump empties the search_path.
            do { _ = try PostgresConnection(url: oldURL).execute(dump) }
            let recorded = try old.withConnection {
                try $0.query("SELECT max(version) AS version FROM schema_migrations").first
                    .map { try $0.int("version") }
            }
            #expect(recorded == version)
            let applied = try old.withConnection { try migrator.migrate($0) }
            // The rest of the legacy chain, then every definition: the legacy files forgot the recorded ones.
            let legacy = migrator.migrations.filter { migrator.isLegacy($0) && $0.version > version }
            let after = migrator.migrations.filter { !migrator.isLegacy($0) }
            #expect(applied == (legacy + after).map(\.name) + migrator.definitions.map(\.path))
            #expect(try old.withConnection { try migrator.migrate($0) }.isEmpty)
            let (freshSchema, oldSchema) = try Self.schemas(freshURL, fresh, oldURL, old)
            #expect(oldSchema == freshSchema)
            try MigrationLayoutTests.deliverOnePush(old)
        }
    }
}
