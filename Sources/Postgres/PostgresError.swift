/// A failure talking to Postgres. `description` is deliberately generic: server messages can quote
/// parameter values (emails, tokens), so they are kept in `serverMessage` and never printed by default.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Code: String, Sendable {
        /// Could not open a connection (server down, bad URL, authentication, no read-write host).
        case connectionFailed = "connection_failed"
        /// The connection broke while a statement ran.
        case connectionLost = "connection_lost"
        /// The connection broke while COMMIT ran: the transaction may or may not have committed.
        /// Callers answer as for any outage; a client retrying with its idempotency key makes the
        /// write exactly once either way.
        case commitOutcomeUnknown = "commit_outcome_unknown"
        /// The pool had no free connection before the deadline.
        case poolTimeout = "pool_timeout"
        /// The server rejected the statement; `sqlState` says why.
        case queryFailed = "query_failed"
        /// A value in a row could not be decoded as the requested type.
        case decodingFailed = "decoding_failed"
    }

    public let code: Code
    /// The five-character SQLSTATE, when the server sent one (e.g. "23505" unique violation).
    public let sqlState: String?
    /// The server's message. May contain data; do not log it unredacted.
    public let serverMessage: String

    public init(code: Code, sqlState: String? = nil, serverMessage: String = "") {
        self.code = code
        self.sqlState = sqlState
        self.serverMessage = serverMessage
    }

    /// What the server's SQLSTATE says about retrying the statement; nil for errors without one.
    public var sqlStateClass: SQLStateClass? { sqlState.map(SQLStateClass.init(sqlState:)) }

    /// True when the database could not be reached, or the server reached cannot take this work now:
    /// the connection is gone, or the server is shutting down, starting up or read-only
    /// (`SQLStateClass.unavailable`). During a failover every one of these is the same fact, "no
    /// writable primary on this connection", and a new connection (libpq's
    /// `target_session_attrs=read-write`) is the remedy.
    public var isUnavailable: Bool {
        switch code {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown, .poolTimeout: return true
        case .queryFailed: return sqlStateClass == .unavailable
        case .decodingFailed: return false
        }
    }

    /// True when the connection that raised this error must not be used again: it is broken, it reaches a server
    /// that is going away or cannot write, the schema changed under its prepared statements (a new connection
    /// prepares them again against the schema as it is now), or a pooler lost one of them (a new connection finds
    /// the pooler and runs unnamed). A pool discards such a connection, so the next request opens a new one and
    /// libpq picks whichever host is the primary now.
    public var discardsConnection: Bool {
        switch code {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown: return true
        case .queryFailed:
            return [.unavailable, .schemaChanged, .preparedStatementLost].contains(sqlStateClass)
        case .poolTimeout, .decodingFailed: return false
        }
    }

    /// True when the server did not hold the named statement this connection prepared, or held another under
    /// its name (`SQLStateClass.preparedStatementLost`): the intake names the setting in its 503.
    public var isPreparedStatementMismatch: Bool { code == .queryFailed && sqlStateClass == .preparedStatementLost }

    /// Worth retrying unchanged (`SQLStateClass.isTransient`): the database is unreachable, the
    /// schema is being upgraded under this release, a pooler lost a prepared statement, or the statement
    /// lost a race or ran out of a resource. Anything else (a constraint, bad data, a raised exception, a
    /// statement timeout) says something about the statement's input.
    public var isTransient: Bool {
        if isUnavailable { return true }
        return sqlStateClass?.isTransient ?? false
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        "PostgresError(\(code.rawValue)\(sqlState.map { ", sqlstate \($0)" } ?? ""))"
    }
}

/// Runs `body`, one transaction, again when Postgres aborted it as a deadlock's victim (40P01), up to
/// `retries` more times. Two transactions locking the same rows in opposite orders (phones swapping
/// tokens, two backfills, a batch of pushes beside a push with the same key) is a race, not a fault
/// of the input: the retry sees the other's commit. Any other error, and the last deadlock, are thrown.
public func retryingDeadlocks<T>(retries: Int = 3, _ body: () throws -> T) throws -> T {
    var attempt = 0
    while true {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState == "40P01" && attempt < retries {
            attempt += 1
        }
    }
}
