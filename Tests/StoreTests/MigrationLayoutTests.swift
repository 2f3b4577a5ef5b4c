import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

@testable import Store

/// The two parts of `sql/` (Sources/Store/Migrator.swift): numbered migrations, then the definition
/// files of `functions/` re-applied whenever their checksum changes; a database migrated with the
/// numbered migrations alone upgrades in place to the same schema as a fresh one.
@Suite("Migrations: numbered files and definition files", .requiresDatabase)
struct MigrationLayoutTests {
    static func bundled() throws -> Migrator {
        try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
    }

    /// `pg_dump --schema-only` of a database, without the lines that differ between any two dumps
    /// (the random key of `\restrict`).
    static func schema(of url: String) throws -> String {
        let dump = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/lib/postgresql/15/bin/pg_dump"),
            ["--schema-only", "--no-owner", "--dbname", url],
            environment: ProcessInfo.processInfo.environment)
        #expect(dump.status == 0, "\(dump.output)")
        return dump.output.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("\\restrict") && !$0.hasPrefix("\\unrestrict") }
            .joined(separator: "\n")
    }

    /// A dump without what the definition files hold (functions, triggers, views). pg_dump heads every object with `--`, then `-- Name: <name>; Type: <type>; ...`.
    static func withoutDefinitions(_ dump: String) -> String {
        dump.components(separatedBy: "\n--\n-- Name: ")
            .filter { entry in
                let header = entry.split(separator: "\n", maxSplits: 1).first ?? ""
                return !["; Type: FUNCTION; ", "; Type: TRIGGER; ", "; Type: VIEW; "].contains { header.contains($0) }
            }
            .joined(separator: "\n--\n-- Name: ")
    }

    /// Runs `body` on a pool of a fresh, empty database, dropped afterwards.
    static func withDatabase(_ body: (String, PostgresPool) throws -> Void) throws {
        try MigrationAndMaintenanceTests.withFreshDatabase { url in
            let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
            defer { pool.close() }
            try body(url, pool)
        }
    }

    @Test("every object of the definition files is applied after the migrations, and only once")
    func freshDatabase() throws {
        let migrator = try Self.bundled()
        #expect(migrator.definitions.contains { $0.name == "claim_deliveries.sql" })
        try Self.withDatabase { _, pool in
            let first = try pool.withConnection { try migrator.migrate($0) }
            let baseline = try #require(migrator.baseline)
            #expect(
                first == [baseline.name] + migrator.migrations.filter { !migrator.isLegacy($0) }.map(\.name)
                    + migrator.definitions.map(\.path))
            let second = try pool.withConnection { try migrator.migrate($0) }
            #expect(second.isEmpty)
            let recorded = try pool.withConnection {
                try $0.query("SELECT count(*) FROM schema_functions").first!.int(0)
            }
            #expect(recorded == migrator.definitions.count)
        }
    }

    @Test("each definition file creates one object, so its file holds that object's only definition")
    func oneObjectPerDefinitionFile() throws {
        for definition in try Self.bundled().definitions {
            let creates = definition.sql.split(separator: "\n").filter { $0.hasPrefix("CREATE ") }
            // The settings file creates nothing: it sets what the files before it created.
            let expected = definition.name == "planner_settings.sql" ? 0 : 1
            #expect(creates.count == expected, "\(definition.path) creates \(creates.count) objects")
        }
    }

    /// The settings of the functions `names`, by name, as `pg_proc.proconfig` lists them ("" for none).
    static func settings(of names: [String], on pool: PostgresPool) throws -> [String: String] {
        try pool.withConnection { connection in
            let rows = try connection.query(
                """
                SELECT proname::text, coalesce(array_to_string(proconfig, ' '), '')
                  FROM pg_proc WHERE proname = ANY (string_to_array($1, ' '))
                """, [names.joined(separator: " ")]
            ).rows
            return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.string(0), try $0.string(1)) })
        }
    }

    @Test("the hot-path functions carry their planner settings, also after an upgrade re-creates one")
    func plannerSettings() throws {
        let migrator = try Self.bundled()
        let file = try #require(migrator.definitions.last)
        #expect(file.name == "planner_settings.sql")
        let names = file.sql.matches(of: /'(herald_[a-z_]+)'/).map { String($0.output.1) }
        #expect(names.count == 29 && names.contains("herald_claim_deliveries"))
        let expected = "plan_cache_mode=force_generic_plan jit=off enable_seqscan=off"
        let claim = try #require(migrator.definitions.first { $0.name == "claim_deliveries.sql" })
        try Self.withDatabase { _, pool in
            try pool.withConnection { _ = try migrator.migrate($0) }
            #expect(
                try Self.settings(of: names, on: pool) == Dictionary(uniqueKeysWithValues: names.map { ($0, expected) })
            )
            // Re-creating a function drops its settings, which is why the settings file runs again after it.
            try pool.withConnection { _ = try $0.execute(claim.sql) }
            #expect(try Self.settings(of: ["herald_claim_deliveries"], on: pool) == ["herald_claim_deliveries": ""])
            // An upgrade whose claim_deliveries.sql changed.
            try pool.withConnection {
                _ = try $0.execute("UPDATE schema_functions SET checksum = 'old' WHERE name = 'claim_deliveries.sql'")
            }
            let upgraded = try pool.withConnection { try migrator.migrate($0) }
            #expect(upgraded == ["functions/claim_deliveries.sql", "functions/planner_settings.sql"])
            #expect(
                try Self.settings(of: ["herald_claim_deliveries"], on: pool) == ["herald_claim_deliveries": expected])
            #expect(try pool.withConnection { try migrator.migrate($0) }.isEmpty)
        }
    }

    @Test("a database of the numbered migrations alone upgrades to the schema of a fresh one, and delivers")
    func upgradeInPlace() throws {
        let migrator = try Self.bundled()
        let numberedOnly = Migrator(migrations: migrator.migrations)
        try Self.withDatabase { freshURL, fresh in
            try fresh.withConnection { _ = try migrator.migrate($0) }
            try Self.withDatabase { oldURL, old in
                try old.withConnection { _ = try numberedOnly.migrate($0) }
                // The numbered migrations alone build every table, index and type of a fresh database (the
                // bookkeeping tables exist in both; a schema-only dump has none of their rows). Functions,
                // triggers and views are the definition files': one changed since the numbered migration that
                // last created it, or whose old signature a migration dropped, differs until they run.
                #expect(
                    try Self.withoutDefinitions(Self.schema(of: oldURL))
                        == Self.withoutDefinitions(Self.schema(of: freshURL)))
                let upgraded = try old.withConnection { try migrator.migrate($0) }
                #expect(upgraded == migrator.definitions.map(\.path))
                #expect(try Self.schema(of: oldURL) == Self.schema(of: freshURL))
                try Self.deliverOnePush(old)
            }
        }
    }

    /// One delivery written, claimed and completed as sent through the worker's statements.
    static func deliverOnePush(_ pool: PostgresPool) throws {
        try pool.withConnection { connection in
            let partner = UUID()
            try connection.execute(
                "INSERT INTO tenants (id) VALUES ('t1'); INSERT INTO users (id, tenant_id) VALUES ('u1', 't1')")
            try connection.query(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                      rate_limit_per_day)
                VALUES ($1, 'app.upgrade', 'Partner', 't1', 'hash', 60, 10000)
                """, [partner])
            try connection.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, apns_token)
                VALUES ('u1', 'iphone', 'ios', 'sandbox', $1)
                """, [String(repeating: "ab", count: 32)])
            let request = UUIDv7.make(at: Date())
            let createdAt = try #require(UUIDv7.timestamp(of: request))
            try connection.query(
                """
                INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane, recipients,
                                           deliveries, suppressed, missing)
                VALUES ($1, $2, $3, 'app.upgrade', 'T', 'B', '{}', 0, 1, 1, 0, '{}')
                """, [request, createdAt, partner])
            let delivery = UUIDv7.make(at: Date())
            try connection.query(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                        environment, payload, available_at)
                VALUES ($1, $2, $3, $4, 0, 'apns', 'u1', 'iphone', 'sandbox', '{"aps":{}}', now())
                """, [delivery, request, createdAt, partner])
            let store = DeliveryStore()
            let claimed = try store.claim(on: connection, worker: "w1", limit: 10, leaseSeconds: 30, services: [.apns])
            #expect(claimed.map(\.id) == [delivery])
            let claim = try #require(claimed.first)
            #expect(claim.verdict == .send)
            #expect(
                try store.complete(on: connection, worker: "w1", [CompletedDelivery(claim, outcome: .sent)]).finished
                    == 1)
            let outcome = try connection.query(
                "SELECT outcome FROM delivery_history_deliveries WHERE id = $1", [delivery])
            #expect(try outcome.first?.string(0) == "sent")
            let sent = try connection.query("SELECT sent FROM push_requests WHERE id = $1", [request])
            #expect(try sent.first?.int(0) == 1)
        }
    }

    @Test("a changed definition file is applied again, an unchanged one is not; a comment alone changes nothing")
    func changedDefinition() throws {
        let base = Migrator(
            migrations: [.init(version: 1, name: "001_t.sql", sql: "CREATE TABLE t (a int)")],
            definitions: [
                .init(name: "one.sql", sql: "CREATE OR REPLACE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 1'"),
                .init(name: "v.sql", sql: "CREATE OR REPLACE VIEW v AS SELECT one() AS x"),
            ])
        let recommented = Migrator(
            migrations: base.migrations,
            definitions: [
                .init(
                    name: "one.sql",
                    sql: "-- Returns one.\nCREATE OR REPLACE FUNCTION one()\n    RETURNS int LANGUAGE sql AS 'SELECT 1'"
                ),
                base.definitions[1],
            ])
        let changed = Migrator(
            migrations: base.migrations,
            definitions: [
                .init(name: "one.sql", sql: "CREATE OR REPLACE FUNCTION one() RETURNS int LANGUAGE sql AS 'SELECT 2'"),
                base.definitions[1],
            ])
        try Self.withDatabase { _, pool in
            let first = try pool.withConnection { try base.migrate($0) }
            #expect(first == ["001_t.sql", "functions/one.sql", "functions/v.sql"])
            let afterComment = try pool.withConnection { try recommented.migrate($0) }
            #expect(afterComment.isEmpty)
            let afterChange = try pool.withConnection { try changed.migrate($0) }
            #expect(afterChange == ["functions/one.sql"])
            let value = try pool.withConnection { try $0.query("SELECT x FROM v").first!.int(0) }
            #expect(value == 2)
            let again = try pool.withConnection { try changed.migrate($0) }
            #expect(again.isEmpty)
        }
    }

    @Test("a definition file Postgres refuses names itself")
    func failingDefinition() throws {
        let broken = Migrator(
            migrations: [.init(version: 1, name: "001_t.sql", sql: "CREATE TABLE t (a int)")],
            definitions: [.init(name: "broken.sql", sql: "CREATE OR REPLACE VIEW w AS SELECT nothing FROM t")])
        try Self.withDatabase { _, pool in
            let failure = try #require(throws: Migrator.Failure.self) {
                try pool.withConnection { try broken.migrate($0) }
            }
            #expect(failure.code == .definitionFailed)
            #expect(failure.message.contains("functions/broken.sql"))
            let recorded = try pool.withConnection {
                try $0.query("SELECT count(*) FROM schema_functions").first!.int(0)
            }
            #expect(recorded == 0)
        }
    }

    @Test("a legacy migration may change once the baseline replaces it; one after the baseline may not")
    func legacyChecksums() throws {
        let first = Migrator.Migration(version: 1, name: "001_t.sql", sql: "CREATE TABLE t (a int)")
        let second = Migrator.Migration(version: 2, name: "002_u.sql", sql: "CREATE TABLE u (a int)")
        let baseline = Migrator.Migration(
            version: 2, name: "baseline/002_baseline.sql",
            sql: "CREATE TABLE t (a int); CREATE TABLE u (a int)")
        let after = Migrator.Migration(version: 3, name: "003_v.sql", sql: "CREATE TABLE v (a int)")
        // The first legacy file loses a statement, as the legacy chain lost its superseded functions.
        let shrunk = Migrator(
            baseline: baseline,
            migrations: [
                .init(version: 1, name: first.name, sql: "CREATE TABLE t (a int);\nSELECT 1"), second, after,
            ])
        let edited = Migrator(
            baseline: baseline,
            migrations: [
                first, second, .init(version: 3, name: after.name, sql: "CREATE TABLE v (a bigint)"),
            ])
        try Self.withDatabase { _, pool in
            // A database older than the baseline, recorded before the legacy file changed.
            try pool.withConnection { _ = try Migrator(migrations: [first]).migrate($0) }
            #expect(try pool.withConnection { try shrunk.migrate($0) } == ["002_u.sql", "003_v.sql"])
            let failure = try #require(throws: Migrator.Failure.self) {
                try pool.withConnection { try edited.migrate($0) }
            }
            #expect(failure.code == .changed && failure.message.contains("003_v.sql"))
            #expect(try pool.withConnection { try shrunk.migrate($0) }.isEmpty)
            let recorded = try pool.withConnection {
                try $0.query("SELECT name FROM schema_migrations ORDER BY version").rows
            }
            #expect(try recorded.map { try $0.string("name") } == ["001_t.sql", "002_u.sql", "003_v.sql"])
        }
    }

    @Test("an older release's migrate refuses a database a newer release migrated, and changes nothing")
    func newerSchemaRefused() throws {
        let first = Migrator.Migration(version: 1, name: "001_t.sql", sql: "CREATE TABLE t (a int)")
        let second = Migrator.Migration(version: 2, name: "002_u.sql", sql: "CREATE TABLE u (a int)")
        func function(returning value: Int) -> Migrator.Definition {
            .init(name: "f.sql", sql: "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT \(value)'")
        }
        let older = Migrator(migrations: [first], definitions: [function(returning: 1)])
        let newer = Migrator(migrations: [first, second], definitions: [function(returning: 2)])
        try Self.withDatabase { _, pool in
            try pool.withConnection { _ = try newer.migrate($0) }
            let failure = try #require(throws: Migrator.Failure.self) {
                try pool.withConnection { try older.migrate($0) }
            }
            #expect(failure.code == .newerSchema)
            #expect(failure.message.contains("migration 2, newer than this release's 1"), "\(failure.message)")
            // The newer definition stays.
            #expect(try pool.withConnection { try $0.query("SELECT f()").first!.int(0) } == 2)
            #expect(try pool.withConnection { try newer.migrate($0) }.isEmpty)
        }
    }

    @Test("a fresh database runs the baseline alone, recorded at its version, then the migrations after it")
    func baselineOnFreshDatabase() throws {
        let legacy = Migrator.Migration(version: 1, name: "001_t.sql", sql: "CREATE TABLE t (a int)")
        let baseline = Migrator.Migration(version: 1, name: "baseline/001_baseline.sql", sql: "CREATE TABLE t (a int)")
        let after = Migrator.Migration(version: 2, name: "002_u.sql", sql: "CREATE TABLE u (a int)")
        let migrator = Migrator(baseline: baseline, migrations: [legacy, after])
        try Self.withDatabase { _, pool in
            #expect(try pool.withConnection { try migrator.migrate($0) } == ["baseline/001_baseline.sql", "002_u.sql"])
            #expect(try pool.withConnection { try migrator.migrate($0) }.isEmpty)
            let recorded = try pool.withConnection {
                try $0.query("SELECT version, name FROM schema_migrations ORDER BY version").rows
            }
            #expect(
                try recorded.map { "\(try $0.int("version")) \(try $0.string("name"))" }
                    == ["1 baseline/001_baseline.sql", "2 002_u.sql"])
        }
    }
}
