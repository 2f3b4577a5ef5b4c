import Foundation

/// A private primary and a synchronous hot standby for failover tests, made and driven by
/// scripts/lib/postgres.sh (herald_pg_start_standby, herald_pg_kill, herald_pg_promote,
/// herald_pg_restart), so tests and operators' rehearsals run the same steps. `databaseURL` names
/// both nodes with `target_session_attrs=read-write`: libpq connects to whichever is the primary.
public final class PostgresFailoverPair: @unchecked Sendable {
    public enum Node: String, Sendable { case primary, standby }

    public let directory: String
    /// The multi-host URL of the `herald` database.
    public let databaseURL: String

    public init() throws {
        // The suite's own cluster variables are unset: herald_pg_start makes a new cluster, on its socket only.
        let output = try Self.script(
            """
            unset HERALD_PG_DIR HERALD_PG_PORT HERALD_PG_SOCKET_DIR HERALD_PG_STANDBY_PORT \
                HERALD_PG_START_CMD HERALD_PG_STOP_CMD
            HERALD_PG_SETTINGS=$'shared_buffers = 32MB\\nmax_connections = 100'
            herald_pg_start && herald_pg_start_standby sync &&
                printf '%s\\n%s\\n' "$HERALD_PG_DIR" "$HERALD_DATABASE_FAILOVER_URL"
            """, environment: "")
        let lines = output.split(separator: "\n").map(String.init)
        guard lines.count >= 2 else { throw TestHTTPClient.Failure(description: "no failover pair: \(output)") }
        directory = lines[lines.count - 2]
        databaseURL = lines[lines.count - 1]
    }

    deinit { destroy() }

    /// kill -9 of the node's postmaster.
    public func kill(_ node: Node) throws { try run("herald_pg_kill \(node.rawValue)") }

    /// Promotes the node; returns once it accepts writes.
    public func promote(_ node: Node = .standby) throws { try run("herald_pg_promote \(node.rawValue)") }

    /// `pg_ctl restart -m fast|immediate`.
    public func restart(_ node: Node, immediate: Bool) throws {
        try run("herald_pg_restart \(node.rawValue) \(immediate ? "immediate" : "fast")")
    }

    public func destroy() { _ = try? run("herald_pg_stop") }

    private func run(_ command: String) throws {
        _ = try Self.script(
            command,
            environment: """
                unset HERALD_PG_START_CMD HERALD_PG_STOP_CMD
                export HERALD_PG_DIR='\(directory)' HERALD_PG_SOCKET_DIR='\(directory)' HERALD_PG_PORT=5432 \
                HERALD_PG__TCP=0 HERALD_PG_STANDBY_PORT=5433
                """)
    }

    /// Runs `command` in bash with scripts/lib/postgres.sh sourced; its standard output.
    private static func script(_ command: String, environment: String) throws -> String {
        let library = TestEnvironment.repositoryRoot.appendingPathComponent("scripts/lib/postgres.sh").path
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("herald-pair-\(UUID().uuidString).sh")
        try "source '\(library)'\n\(environment)\n\(command)\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try PostgresCluster.shell("bash \(file.path)")
    }
}
