import Foundation
import Testing

@testable import Store

/// `Migrator.load`'s reading of a migrations folder: the numbered files, the baseline, and the layout errors.
@Suite("Migrations: the folder's layout")
struct MigratorLoadTests {
    /// A folder holding `files` (relative path: SQL) and an empty `functions/ORDER`, removed afterwards.
    static func withFolder(_ files: [String: String], _ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-" + UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (path, sql) in files.merging(["functions/ORDER": ""], uniquingKeysWith: { first, _ in first }) {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true)
            try sql.write(to: url, atomically: true, encoding: .utf8)
        }
        try body(folder)
    }

    static func layoutFailure(_ files: [String: String]) throws -> String {
        var message = ""
        try withFolder(files) { folder in
            let failure = try #require(throws: Migrator.Failure.self) { try Migrator.load(from: folder) }
            #expect(failure.code == .layout)
            message = failure.message
        }
        return message
    }

    @Test("the baseline is read from baseline/, and the files up to its number are the legacy chain")
    func baselineAndLegacy() throws {
        try Self.withFolder(["001_a.sql": "A", "002_b.sql": "B", "003_c.sql": "C", "baseline/002_base.sql": "AB"]) {
            let migrator = try Migrator.load(from: $0)
            #expect(migrator.baseline == .init(version: 2, name: "baseline/002_base.sql", sql: "AB"))
            #expect(migrator.migrations.map(\.name) == ["001_a.sql", "002_b.sql", "003_c.sql"])
            #expect(migrator.migrations.filter(migrator.isLegacy).map(\.version) == [1, 2])
        }
        try Self.withFolder(["001_a.sql": "A"]) { folder in
            let migrator = try Migrator.load(from: folder)
            #expect(migrator.baseline == nil)
        }
    }

    @Test("a baseline no numbered migration reaches, two baselines, or two files of one number are refused")
    func layoutErrors() throws {
        #expect(
            try Self.layoutFailure(["001_a.sql": "A", "baseline/002_base.sql": "AB"])
                .contains("baseline/002_base.sql"))
        #expect(
            try Self.layoutFailure(["001_a.sql": "A", "baseline/001_x.sql": "A", "baseline/001_y.sql": "A"])
                .contains("more than one baseline"))
        #expect(
            try Self.layoutFailure(["001_a.sql": "A", "001_b.sql": "B"])
                == "migrations 001_a.sql and 001_b.sql share a number")
        #expect(try Self.layoutFailure(["001_a.sql": "A", "baseline/base.sql": "A"]).contains("baseline/base.sql"))
    }
}
