/// How a connection guards against a database that stops answering. Every Herald connection has
/// these bounds, so a half-open TCP connection (a partitioned or frozen server) fails within
/// seconds instead of holding a thread for the kernel's ~15 minutes of retransmissions.
///
/// Settings that the connection URL names itself win over these (they are passed to libpq before
/// the URL), except `applicationName`, which is always Herald's.
public struct PostgresConnectionOptions: Sendable, Equatable {
    public var applicationName: String
    /// libpq `connect_timeout`.
    public var connectTimeout: Duration
    /// Server-side `statement_timeout` set on every new connection; nil keeps the server's.
    public var statementTimeout: Duration?
    /// TCP keepalive probes: first after `keepaliveIdle` of silence, then every `keepaliveInterval`,
    /// the connection declared dead after `keepaliveCount` unanswered probes.
    public var keepaliveIdle: Duration
    public var keepaliveInterval: Duration
    public var keepaliveCount: Int
    /// libpq `tcp_user_timeout`: sent data unacknowledged for this long closes the connection.
    public var tcpUserTimeout: Duration
    /// True (the default, `HERALD_DB_PREPARED=1`): each SQL text is prepared once per connection as
    /// a named statement. False is for a transaction pooler (PgBouncer `pool_mode = transaction`,
    /// docs/operations.md), where consecutive transactions of one client run on different server
    /// connections: statements run unnamed, and the connection sets no session state a server
    /// connection would keep for the next client: only `TimeZone`, which PgBouncer tracks and
    /// re-applies per client, is set; `statement_timeout` and `client_min_messages` are left to the
    /// role's settings (`ALTER ROLE ... SET`), and `statementTimeout` is ignored.
    public var preparedStatements: Bool

    public init(
        applicationName: String = "herald", connectTimeout: Duration = .seconds(5),
        statementTimeout: Duration? = .seconds(30), keepaliveIdle: Duration = .seconds(10),
        keepaliveInterval: Duration = .seconds(5), keepaliveCount: Int = 3,
        tcpUserTimeout: Duration = .seconds(30), preparedStatements: Bool = true
    ) {
        self.applicationName = applicationName
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.keepaliveIdle = keepaliveIdle
        self.keepaliveInterval = keepaliveInterval
        self.keepaliveCount = keepaliveCount
        self.tcpUserTimeout = tcpUserTimeout
        self.preparedStatements = preparedStatements
    }

    /// libpq keywords and values placed before the URL (which may override them).
    var defaultsBeforeURL: [(String, String)] {
        [
            ("connect_timeout", String(max(1, Self.wholeSeconds(connectTimeout)))),
            ("keepalives", "1"),
            ("keepalives_idle", String(max(1, Self.wholeSeconds(keepaliveIdle)))),
            ("keepalives_interval", String(max(1, Self.wholeSeconds(keepaliveInterval)))),
            ("keepalives_count", String(max(1, keepaliveCount))),
            ("tcp_user_timeout", String(Self.milliseconds(tcpUserTimeout))),
        ]
    }

    /// The statement run once the connection is open. Through a transaction pooler (no prepared
    /// statements) a session SET would stay on whichever server connection ran it, for other
    /// clients, and be missing on the others; TimeZone is the exception (see preparedStatements).
    static func sessionSetup(statementTimeout: Duration?, prepared: Bool) -> String {
        guard prepared else { return "SET TimeZone TO 'UTC'" }
        var setup = "SET TimeZone TO 'UTC'; SET client_min_messages TO warning"
        if let statementTimeout {
            setup += "; SET statement_timeout TO \(Self.milliseconds(statementTimeout))"
        }
        return setup
    }

    static func wholeSeconds(_ duration: Duration) -> Int { Int(duration.components.seconds) }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }
}
