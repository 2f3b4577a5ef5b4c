import Foundation

/// A private Postgres cluster for tests that must stop and restart the server (so they cannot
/// share the suite's database). Runs as the `postgres` user, as initdb and postgres require when
/// the tests run as root; listens on a Unix socket in its own folder only.
public final class PostgresCluster: @unchecked Sendable {
    public let directory: URL
    public let databaseURL: String
    private let binaries = URL(fileURLWithPath: "/usr/lib/postgresql/15/bin")

    public init() throws {
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("herald-cluster-\(UUID().uuidString.prefix(8))")
        databaseURL = "postgresql://postgres@/postgres?host=\(directory.path)"
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try PostgresCluster.shell("chown postgres \(directory.path)")
        try asPostgres(
            "\(binaries.path)/initdb -D \(directory.path)/data -A trust -U postgres --no-sync -E UTF8 >/dev/null")
        let settings = """
            listen_addresses = ''
            unix_socket_directories = '\(directory.path)'
            fsync = off
            max_connections = 50
            """
        try settings.appendLine(to: directory.appendingPathComponent("data/postgresql.conf"))
        try start()
    }

    deinit { destroy() }

    public func start() throws {
        try asPostgres(
            "\(binaries.path)/pg_ctl -D \(directory.path)/data -l \(directory.path)/log -w -t 30 start >/dev/null")
    }

    public func stop() throws {
        try asPostgres("\(binaries.path)/pg_ctl -D \(directory.path)/data -m fast -w -t 30 stop >/dev/null")
    }

    public func destroy() {
        _ = try? asPostgres(
            "\(binaries.path)/pg_ctl -D \(directory.path)/data -m immediate -w -t 30 stop >/dev/null 2>&1")
        try? FileManager.default.removeItem(at: directory)
    }

    private func asPostgres(_ command: String) throws {
        try Self.shell("cd \(directory.path) && runuser -u postgres -- sh -c '\(command)'")
    }

    /// Runs a shell command and waits for it. Uses posix_spawn and waitpid rather than Foundation's
    /// Process, which waits for a descriptor that a daemon started by the command (the postmaster)
    /// inherits and never closes.
    /// Returns the command's output (standard output and error).
    @discardableResult
    static func shell(_ command: String) throws -> String {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("herald-shell-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let arguments = ["/bin/sh", "-c", "(\(command)) >\(log.path) 2>&1 </dev/null"]
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &cArguments, environ)
        guard spawned == 0 else { throw TestHTTPClient.Failure(description: "posix_spawn: \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitCode = (status >> 8) & 0xFF
        guard status & 0x7F == 0, exitCode == 0 else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestHTTPClient.Failure(description: "`\(command)` failed (\(status)): \(output)")
        }
        return (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }
}

extension String {
    func appendLine(to file: URL, creating: Bool = false) throws {
        if creating && !FileManager.default.fileExists(atPath: file.path) {
            guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
            }
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data(("\n" + self + "\n").utf8))
    }
}
