import Foundation
import Postgres

/// Applies the numbered migrations in `sql/` (bundled as resources) in order. Safe to run from
/// several processes at once: each migration is applied in its own transaction under a
/// transaction-scoped advisory lock and re-checked after taking it; an applied migration whose
/// file changed is reported, never re-run.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public let version: Int
        public let name: String
        public let sql: String

        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public let migrations: [Migration]
    /// The advisory lock that serialises migrations across processes.
    static let lockKey = 7_301_007

    public init(migrations: [Migration]) { self.migrations = migrations.sorted { $0.version < $1.version } }

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
            throw Failure(message: "migrations not found; set HERALD_MIGRATIONS_DIR to the sql/ folder")
        }
        return try load(from: directory)
    }

    /// Reads every `NNN_name.sql` file of a folder.
    public static func load(from directory: URL) throws -> Migrator {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }
        guard !files.isEmpty else { throw Failure(message: "no migrations (*.sql) in \(directory.path)") }
        var migrations: [Migration] = []
        for file in files {
            guard let version = Int(file.prefix { $0.isNumber }) else {
                throw Failure(message: "migration \(file) does not start with a number")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            migrations.append(Migration(version: version, name: file, sql: sql))
        }
        return Migrator(migrations: migrations)
    }

    /// Applies what is missing; returns the names applied by this call.
    @discardableResult
    public func migrate(_ connection: PostgresConnection) throws -> [String] {
        // Under the lock too: concurrent CREATE TABLE IF NOT EXISTS races on the catalog (23505).
        try connection.transaction { connection in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    checksum   text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())
                """)
        }
        var applied: [String] = []
        for migration in migrations {
            let checksum = Self.checksum(migration.sql)
            let done = try connection.transaction { connection -> Bool in
                try connection.query("SELECT pg_advisory_xact_lock($1)", [Self.lockKey])
                if let row = try connection.query(
                    "SELECT checksum FROM schema_migrations WHERE version = $1", [migration.version]).first
                {
                    if try row.string(0) != checksum {
                        throw Failure(message: "migration \(migration.name) changed after it was applied")
                    }
                    return false
                }
                try connection.execute(migration.sql)
                try connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    [migration.version, migration.name, checksum])
                return true
            }
            if done { applied.append(migration.name) }
        }
        return applied
    }

    /// FNV-1a over the file: enough to notice an edited migration.
    static func checksum(_ text: String) -> String {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return String(hash, radix: 16)
    }
}
