import Foundation

/// A private PgBouncer in `pool_mode = transaction` (or `poolMode`) in front of the suite's Postgres, on a
/// Unix socket in its own folder, as scripts/lib/pgbouncer.sh starts one for scripts. Runs as the
/// `postgres` user (PgBouncer refuses root). `poolSize` server connections per database and user:
/// small, so that clients share server connections, which is what transaction pooling breaks.
public final class PgBouncer: @unchecked Sendable {
    public static let binary = "/usr/sbin/pgbouncer"
    /// Nil when pgbouncer is installed; else why the tests that need it are skipped.
    public static var unavailableReason: String? {
        FileManager.default.isExecutableFile(atPath: binary)
            ? nil : "pgbouncer is not installed (scripts/setup installs it): skipping the PgBouncer tests"
    }

    public let directory: URL
    public let port = 6432

    public init(poolSize: Int = 2, poolMode: String = "transaction", serverURL: String = TestEnvironment.databaseURL)
        throws
    {
        guard let components = URLComponents(string: serverURL),
            let host = components.queryItems?.first(where: { $0.name == "host" })?.value
        else {
            throw TestHTTPClient.Failure(description: "PgBouncer needs a postgresql:// URL with host=<socket dir>")
        }
        let serverPort =
            components.port ?? components.queryItems?.first(where: { $0.name == "port" })?.value
            .flatMap(Int.init) ?? 5432
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("herald-pgb-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // trust still needs the user in auth_file; the cluster itself trusts local connections.
        try #""postgres" """#.appendLine(to: directory.appendingPathComponent("userlist.txt"), creating: true)
        let settings = """
            [databases]
            * = host=\(host) port=\(serverPort)

            [pgbouncer]
            pool_mode = \(poolMode)
            listen_addr =
            listen_port = \(port)
            unix_socket_dir = \(directory.path)
            auth_type = trust
            auth_file = \(directory.path)/userlist.txt
            default_pool_size = \(poolSize)
            max_client_conn = 500
            admin_users = postgres
            logfile = \(directory.path)/pgbouncer.log
            pidfile = \(directory.path)/pgbouncer.pid
            """
        try settings.appendLine(to: directory.appendingPathComponent("pgbouncer.ini"), creating: true)
        try PostgresCluster.shell("chown -R postgres \(directory.path)")
        try PostgresCluster.shell(
            "cd \(directory.path) && runuser -u postgres -- \(Self.binary) -d \(directory.path)/pgbouncer.ini")
        // Ready when it accepts, not when its socket file appears: the file exists from bind(), and a
        // connect before listen() is refused (seen with four PgBouncers starting on a loaded machine).
        let socket = directory.appendingPathComponent(".s.PGSQL.\(port)").path
        do {
            try waitFor("PgBouncer accepting", timeout: .seconds(30), interval: .milliseconds(100)) {
                Self.accepts(socket)
            }
        } catch {
            let log =
                (try? String(contentsOf: directory.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? ""
            throw TestHTTPClient.Failure(
                description: "PgBouncer is not accepting on \(socket) after 30 s:\n\(log.suffix(2000))")
        }
    }

    /// True when a Unix-socket connect to `path` succeeds (closed at once; PgBouncer logs it and moves on).
    static func accepts(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits = withUnsafeMutableBytes(of: &address.sun_path) { pathBytes in
            let bytes = Array(path.utf8)
            guard bytes.count < pathBytes.count else { return false }
            pathBytes.copyBytes(from: bytes)
            return true
        }
        guard fits else { return false }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    deinit {
        // SHUTDOWN on the admin console rather than a signal: the daemon inherits the test process's
        // blocked signal mask (posix_spawn keeps it), so SIGTERM and SIGINT stay pending forever.
        _ = try? PostgresCluster.shell(
            "/usr/lib/postgresql/15/bin/psql -X -q -h \(directory.path) -p \(port) -U postgres -d pgbouncer -c SHUTDOWN || true"
        )
        if let text = try? String(contentsOf: directory.appendingPathComponent("pgbouncer.pid"), encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            try? waitFor("PgBouncer exited", timeout: .seconds(5), interval: .milliseconds(100)) { kill(pid, 0) != 0 }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// `database` on the suite's server, through this PgBouncer.
    public func url(database: String) -> String {
        "postgresql://postgres@/\(database)?host=\(directory.path)&port=\(port)"
    }
}
