import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh migrated database and the real heraldctl run against it with standard output and
/// standard error captured apart (the result on stdout, progress on stderr).
final class BackfillDatabase: @unchecked Sendable {
    static let signingKeyID = "bk1"
    static let signingKey = [UInt8](repeating: 0x5A, count: 32)

    let url: String
    let pool: PostgresPool
    private let drop: () -> Void
    /// Variables beyond HERALD_DATABASE_URL and the signing keys.
    var environment: [String: String] = [:]

    init() throws {
        let database = try HeraldCtlTests.freshDatabase()
        url = database.url
        drop = database.drop
        pool = PostgresPool(configuration: .init(url: url, maxConnections: 2))
        let migrated = try runQuick(["migrate"])
        guard migrated.status == 0 else { throw Failure(description: "migrate failed: \(migrated.stderr)") }
    }

    deinit {
        pool.close()
        drop()
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// stdout as the one JSON document it must be.
        func json() throws -> JSONValue { try JSONParser.parse(stdout.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    var fullEnvironment: [String: String] {
        var all = ProcessInfo.processInfo.environment
        all["HERALD_DATABASE_URL"] = url
        all["HERALD_SIGNING_KEYS"] = "\(Self.signingKeyID):\(Data(Self.signingKey).base64EncodedString())"
        for (name, value) in environment { all[name] = value }
        return all
    }

    /// Starts heraldctl; stderr goes to its own file through a shell that then execs heraldctl
    /// (same pid, so a signal sent to the child reaches heraldctl itself), niced: a 100,000-line load in
    /// the debug build would otherwise take both cores from the suite's timing-sensitive tests.
    func start(_ arguments: [String]) throws -> (child: ChildProcess, stderr: URL) {
        let stderr = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-ctl-\(UUID().uuidString).err")
        var environment = fullEnvironment
        environment["HERALD_TEST_STDERR"] = stderr.path
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: [
                "-c", "exec nice -n 10 \"$0\" \"$@\" 2>\"$HERALD_TEST_STDERR\"", HeraldCtlTests.executable.path,
            ]
                + arguments,
            environment: environment)
        return (child, stderr)
    }

    /// Waits off the cooperative threads (ChildProcess.waitForExit): a 100,000-line run takes a minute.
    func finish(_ started: (child: ChildProcess, stderr: URL)) async -> Result {
        await started.child.waitForExit()
        return collect(started)
    }

    func run(_ arguments: [String]) async throws -> Result { await finish(try start(arguments)) }

    private func collect(_ started: (child: ChildProcess, stderr: URL)) -> Result {
        let stderr = (try? String(contentsOf: started.stderr, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: started.stderr)
        return Result(status: started.child.process.terminationStatus, stdout: started.child.output, stderr: stderr)
    }

    /// A command that takes a moment (migrate, partners create), waited for on the caller's thread.
    func runQuick(_ arguments: [String]) throws -> Result {
        let started = try start(arguments)
        started.child.process.waitUntilExit()
        return collect(started)
    }

    func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try pool.withConnection { try $0.query(sql, parameters).first!.int(0) }
    }

    func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> [PostgresRow] {
        try pool.withConnection { try $0.query(sql, parameters).rows }
    }

    /// Creates a partner with heraldctl; returns its id.
    func partner(_ miniAppID: String, name: String, tenant: String) throws -> UUID {
        let created = try runQuick([
            "partners", "create", "--mini-app-id", miniAppID, "--display-name", name, "--tenant", tenant,
            "--json",
        ])
        guard created.status == 0, let id = try created.json()["id"]?.stringValue.flatMap(UUID.init(uuidString:)) else {
            throw Failure(description: "partners create failed: \(created.stdout) \(created.stderr)")
        }
        return id
    }
}

/// Writes JSONL lines to a temporary file.
func writeLines(_ lines: [String]) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "herald-backfill-\(UUID().uuidString).jsonl")
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: url)
    return url
}

func json(_ value: JSONValue) -> String { JSONWriter.string(value) }
