import Foundation
import HeraldTestSupport
import Testing

/// The build-time tool that embeds Sources/Store/Queries/*.sql (Sources/embed-queries), run on files of its own:
/// fragments shared across files, unprepared queries and run-time identifiers, and the build errors of their misuse.
@Suite("Query embedding")
struct QueryEmbeddingTests {
    /// Runs embed-queries on `files` (name: text); returns its exit status, its output, and the Swift it wrote.
    func embed(_ files: [String: String]) throws -> (status: Int32, output: String, swift: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(TestEnvironment.unique("queries"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files {
            try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let output = folder.appendingPathComponent("Queries.swift")
        let child = try ChildProcess(
            executable: TestEnvironment.binDirectory.appendingPathComponent("embed-queries"),
            arguments: [output.path] + files.keys.sorted().map { folder.appendingPathComponent($0).path },
            environment: [:])
        child.process.waitUntilExit()
        let swift = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (child.process.terminationStatus, child.output, swift)
    }

    @Test("a fragment is read by another file as {{file.name}}, fragments within it substituted first")
    func sharedFragment() throws {
        let result = try embed([
            "counts.sql": """
            -- fragment: table
            items i
            -- fragment: total
            (SELECT count(*) FROM {{table}})
            """,
            "reports.sql": """
            -- name: report
            -- returns: NoRow
            SELECT {{counts.total}} AS total;
            """,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.swift.contains(#"text: "SELECT (SELECT count(*) FROM items i) AS total")"#), "\(result.swift)")
    }

    @Test("`-- unprepared` and `-- identifiers:` mark the generated statement; the placeholder stays for run time")
    func unpreparedAndIdentifiers() throws {
        let result = try embed([
            "notes.sql": """
            -- name: listen
            -- unprepared
            -- identifiers: channel
            LISTEN {{channel}};
            """
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.swift.contains(#"text: "LISTEN {{channel}}","#), "\(result.swift)")
        #expect(result.swift.contains("isPrepared: false)"), "\(result.swift)")
    }

    @Test(
        "misuse is a build error naming the file and what is wrong",
        arguments: [
            ("-- name: a\nSELECT {{missing}};", "a fragment the file does not define"),
            ("-- name: a\nSELECT {{other.missing}};", "a fragment the file does not define"),
            ("-- name: a\n-- identifiers: channel\nLISTEN x;", "not used as {{channel}}"),
            (
                "-- name: a\n-- identifiers: channel\n-- parameters: id UUID\nLISTEN {{channel}} $1;",
                "filled at run time"
            ),
            ("-- name: a\n-- identifiers: Channel\nLISTEN {{Channel}};", "`-- identifiers:` takes lowerCamelCase"),
            ("-- name: a\n-- unprepared\n-- unprepared\nSELECT 1;", "`-- unprepared` marks a query, once"),
            ("-- fragment: f\n-- unprepared\nx\n-- name: a\nSELECT {{f}};", "`-- unprepared` marks a query, once"),
            ("-- fragment: f\n{{g}}\n-- fragment: g\n{{f}}\n-- name: a\nSELECT {{f}};", "without end"),
        ])
    func misuse(sql: String, message: String) throws {
        let result = try embed(["bad.sql": sql])
        #expect(result.status != 0)
        #expect(result.output.contains("bad.sql"), "\(result.output)")
        #expect(result.output.contains(message), "\(result.output)")
    }
}
