import Foundation
import Postgres

/// Brings a database to this build's schema, from the files of `sql/` (bundled as resources):
///
/// 1. The baseline (`baseline/NNN_name.sql`, at most one): the schema the numbered migrations up to
///    its number leave, without the definitions. A database with no migration recorded runs it
///    alone, in one transaction, and is recorded at its version.
/// 2. The numbered migrations (`NNN_name.sql`): tables, indexes, types and data changes,
///    append-only, applied once each in version order. Those numbered up to the baseline's are the
///    legacy chain: a database recorded below the baseline upgrades through them, one at or past it
///    skips them. A legacy file holds no function, trigger or view bodies (only the DROPs of old
///    signatures, and what its data steps call) and may be edited, so its checksum is not verified;
///    applying one forgets the recorded definitions, so that all of them run again. An applied
///    migration after the baseline whose SQL changed is refused, never re-run (its comments and
///    layout may change: see `checksum(_:)`).
/// 3. The definitions (`functions/*.sql`): one function, trigger or view per file, each holding
///    the object's only current definition as `CREATE OR REPLACE`. After the migrations, every
///    file whose checksum differs from the one recorded in `schema_functions` is applied again,
///    in the order `functions/ORDER` lists them (Flyway's repeatable migrations). The rule of
///    that order: a file comes after every file whose object it uses, so a trigger comes after
///    its trigger function, and a view or a `LANGUAGE sql` function after the functions it calls.
///    The settings file (`planner_settings.sql`), which sets other functions' planner settings, is
///    last, and runs again whenever a file before it runs: `CREATE OR REPLACE FUNCTION` drops a
///    function's settings.
///
/// Safe to run from several processes at once: each migration is applied in its own transaction,
/// and the definitions together in one, under one transaction-scoped advisory lock, each file
/// re-checked after taking it.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    /// One file of `functions/`: the current definition of one function, trigger or view.
    public struct Definition: Sendable, Equatable {
        /// The file's name inside `functions/`, e.g. `claim_deliveries.sql`.
        public let name: String
        public let sql: String

        /// How the file is named in messages and in what `migrate` returns.
        public var path: String { Migrator.definitionsFolder + "/" + name }
    }

    public struct Failure: Error, CustomStringConvertible {
        public enum Code: String, Sendable {
            /// No migrations folder, or one without migrations or `functions/ORDER`.
            case notFound = "migrations_not_found"
            /// A file whose name or place breaks the layout (a migration without a number, two with
            /// one number, a baseline no legacy migration reaches, `functions/ORDER` and the folder
            /// disagreeing).
            case layout = "migrations_layout"
            /// An applied migration whose SQL differs from the file's.
            case changed = "migration_changed"
            /// A definition file Postgres refused.
            case definitionFailed = "definition_failed"
            /// The database records a migration this build does not have: a newer release migrated it, and
            /// this one's definitions would replace the newer ones (docs/architecture.md, *Schema changes
            /// across releases*).
            case newerSchema = "schema_newer"
        }

        public let code: Code
        public let message: String
        public var description: String { message }
    }

    /// The schema a fresh database starts from, or nil to build every database through `migrations`.
    public let baseline: Migration?
    /// Every numbered migration, in version order: the legacy chain (up to the baseline's version)
    /// and those after it.
    public let migrations: [Migration]
    /// In the order they are applied.
    public let definitions: [Definition]
    /// The advisory lock that serialises migrations across processes.
    static let lockKey = 7_301_007
    /// The subfolder of the definitions, and the file listing their order.
    static let definitionsFolder = "functions"
    static let orderFile = "ORDER"
    /// The definition file that sets the planner settings of functions other files define: listed
    /// last, and applied again in the same transaction whenever a definition before it is.
    static let settingsFile = "planner_settings.sql"
    /// The subfolder holding the baseline.
    static let baselineFolder = "baseline"

    public init(baseline: Migration? = nil, migrations: [Migration], definitions: [Definition] = []) {
        self.baseline = baseline
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.definitions = definitions
    }

    /// True for a migration the baseline replaces: applied only to a database recorded below it.
    public func isLegacy(_ migration: Migration) -> Bool {
        baseline.map { migration.version <= $0.version } ?? false
    }

    /// The migrations shipped with this build: `HERALD_MIGRATIONS_DIR` when set, else the
    /// `Herald_Store.resources/Migrations` folder SwiftPM places beside the executables (copy it
    /// along with them), else `../share/herald/sql` relative to the executable.
    public static func bundled(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Migrator {
        let executableDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        let candidates = [
            environment["HERALD_MIGRATIONS_DIR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) },
            executableDirectory.appendingPathComponent("Herald_Store.resources/Migrations"),
            Bundle.main.bundleURL.appendingPathComponent("Herald_Store.resources/Migrations"),
            executableDirectory.appendingPathComponent("../share/herald/sql"),
        ].compactMap { $0 }
        guard let directory = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw Failure(
                code: .notFound, message: "migrations not found; set HERALD_MIGRATIONS_DIR to the sql/ folder")
        }
        return try load(from: directory)
    }

    /// Reads every `NNN_name.sql` file of a folder, its baseline, and the definitions its
    /// `functions/ORDER` lists.
    public static func load(from directory: URL) throws -> Migrator {
        let migrations = try loadNumbered(from: directory, prefix: "")
        guard !migrations.isEmpty else {
            throw Failure(code: .notFound, message: "no migrations (*.sql) in \(directory.path)")
        }
        if let twice = Dictionary(grouping: migrations, by: \.version).values.first(where: { $0.count > 1 }) {
            throw Failure(
                code: .layout,
                message: "migrations \(twice.map(\.name).sorted().joined(separator: " and ")) "
                    + "share a number")
        }
        let baselineURL = directory.appendingPathComponent(baselineFolder)
        let baselines =
            FileManager.default.fileExists(atPath: baselineURL.path)
            ? try loadNumbered(from: baselineURL, prefix: baselineFolder + "/") : []
        guard baselines.count <= 1 else {
            throw Failure(code: .layout, message: "\(baselineFolder)/ holds more than one baseline")
        }
        if let baseline = baselines.first, !migrations.contains(where: { $0.version == baseline.version }) {
            throw Failure(
                code: .layout,
                message: "\(baseline.name) has no numbered migration of its version, "
                    + "through which an older database would reach it")
        }
        return Migrator(
            baseline: baselines.first, migrations: migrations,
            definitions: try loadDefinitions(from: directory.appendingPathComponent(definitionsFolder)))
    }

    /// The `NNN_name.sql` files of a folder, named `prefix` + file name.
    static func loadNumbered(from directory: URL, prefix: String) throws -> [Migration] {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        return try files.map { file in
            guard let version = Int(file.prefix { $0.isNumber }) else {
                throw Failure(code: .layout, message: "migration \(prefix + file) does not start with a number")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            return Migration(version: version, name: prefix + file, sql: sql)
        }
    }

    /// The files `ORDER` lists (one name a line; blank lines and `#` comments skipped), which must
    /// be exactly the folder's `*.sql` files, each once.
    static func loadDefinitions(from folder: URL) throws -> [Definition] {
        let orderURL = folder.appendingPathComponent(orderFile)
        guard let order = try? String(contentsOf: orderURL, encoding: .utf8) else {
            throw Failure(code: .notFound, message: "\(definitionsFolder)/\(orderFile) not found in \(folder.path)")
        }
        let listed = order.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let present = Set(
            try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") })
        if let twice = Dictionary(grouping: listed, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw Failure(code: .layout, message: "\(definitionsFolder)/\(orderFile) lists \(twice) twice")
        }
        if let missing = listed.first(where: { !present.contains($0) }) {
            throw Failure(
                code: .layout, message: "\(definitionsFolder)/\(orderFile) lists \(missing), which does not exist")
        }
        if let unlisted = present.subtracting(listed).sorted().first {
            throw Failure(
                code: .layout,
                message: "\(definitionsFolder)/\(unlisted) is not listed in \(definitionsFolder)/\(orderFile)")
        }
        if listed.contains(settingsFile), listed.last != settingsFile {
            throw Failure(
                code: .layout, message: "\(definitionsFolder)/\(orderFile) must list \(settingsFile) last")
        }
        return try listed.map {
            Definition(name: $0, sql: try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// Applies the missing migrations, then every definition whose checksum changed; returns the
    /// names applied by this call (definitions as `functions/name.sql`).
    @discardableResult
    public func migrate(_ connection: PostgresConnection) throws -> [String] {
        // Under the lock too: concurrent CREATE TABLE IF NOT EXISTS races on the catalog (23505).
        try connection.transaction { connection in
            try connection.run(Queries.SchemaMigrations.Lock(key: Self.lockKey))
            try connection.execute(Queries.SchemaMigrations.bootstrap)
        }
        try refuseNewerSchema(on: connection)
        var applied: [String] = []
        var reachedBaseline = false
        if let baseline {
            let (ran, version) = try applyBaseline(baseline, on: connection)
            if ran { applied.append(baseline.name) }
            // Versions only grow, so a database at or past the baseline stays there.
            reachedBaseline = version >= baseline.version
        }
        for migration in migrations where !(reachedBaseline && isLegacy(migration)) {
            if try apply(migration, verified: !isLegacy(migration), on: connection) {
                applied.append(migration.name)
            }
        }
        return applied + (try applyDefinitions(on: connection))
    }

    /// Throws `newerSchema` when the database records a migration numbered past this build's last: a rollback
    /// runs the older processes against the newer schema, never the older `migrate`.
    private func refuseNewerSchema(on connection: PostgresConnection) throws {
        guard let known = migrations.last?.version ?? baseline?.version else { return }
        let highest = try connection.row(Queries.SchemaMigrations.HighestVersion())?.highest ?? 0
        guard highest > known else { return }
        throw Failure(
            code: .newerSchema,
            message: "the database is at migration \(highest), newer than this release's \(known); a newer release "
                + "migrated it: run that release's migrate, or none")
    }

    /// Applies the baseline when no migration is recorded; whether this call applied it, and the
    /// highest version recorded afterwards (0 for none).
    private func applyBaseline(_ baseline: Migration, on connection: PostgresConnection) throws -> (Bool, Int) {
        try connection.transaction { connection -> (Bool, Int) in
            try connection.run(Queries.SchemaMigrations.Lock(key: Self.lockKey))
            let highest = try connection.row(Queries.SchemaMigrations.HighestVersion())?.highest ?? 0
            guard highest == 0 else { return (false, highest) }
            try connection.execute(baseline.sql)
            try record(baseline, on: connection)
            return (true, baseline.version)
        }
    }

    /// Applies one migration unless it is recorded; true when this call applied it. A recorded
    /// migration whose checksum differs is refused when `verified`.
    private func apply(_ migration: Migration, verified: Bool, on connection: PostgresConnection) throws -> Bool {
        try connection.transaction { connection -> Bool in
            try connection.run(Queries.SchemaMigrations.Lock(key: Self.lockKey))
            if let recorded = try connection.row(Queries.SchemaMigrations.MigrationChecksum(version: migration.version))
            {
                if verified, recorded.checksum != Self.checksum(migration.sql) {
                    throw Failure(code: .changed, message: "migration \(migration.name) changed after it was applied")
                }
                return false
            }
            try connection.execute(migration.sql)
            try record(migration, on: connection)
            if isLegacy(migration) {
                // A legacy file no longer re-creates the objects it dropped: every definition runs again.
                try connection.run(Queries.SchemaMigrations.ForgetDefinitions())
            }
            return true
        }
    }

    private func record(_ migration: Migration, on connection: PostgresConnection) throws {
        try connection.run(
            Queries.SchemaMigrations.RecordMigration(
                version: migration.version, name: migration.name, checksum: Self.checksum(migration.sql)))
    }

    /// Applies, in one transaction, each definition whose recorded checksum is not its own, and the
    /// settings file after any of them; returns their paths. One transaction, so that no caller sees a
    /// function re-created without the settings the last file gives it.
    private func applyDefinitions(on connection: PostgresConnection) throws -> [String] {
        try connection.transaction { connection -> [String] in
            try connection.run(Queries.SchemaMigrations.Lock(key: Self.lockKey))
            var applied: [String] = []
            for definition in definitions {
                let checksum = Self.checksum(definition.sql)
                let recorded = try connection.row(Queries.SchemaMigrations.DefinitionChecksum(name: definition.name))?
                    .checksum
                // A definition before the settings file was re-created, losing its settings.
                let settingsDropped = definition.name == Self.settingsFile && !applied.isEmpty
                guard recorded != checksum || settingsDropped else { continue }
                do {
                    try connection.execute(definition.sql)
                } catch {
                    throw Failure(code: .definitionFailed, message: "\(definition.path) failed: \(error)")
                }
                try connection.run(
                    Queries.SchemaMigrations.RecordDefinition(name: definition.name, checksum: checksum))
                applied.append(definition.path)
            }
            return applied
        }
    }
}

// The rows of the bookkeeping statements (Sources/Store/Queries/schema_migrations.sql).
extension Migrator {
    struct Highest: QueryRow, Decodable {
        let highest: Int
    }

    /// A recorded checksum (of a migration or a definition).
    struct Recorded: QueryRow, Decodable {
        let checksum: String
    }
}
