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

    /// True when the database could not be reached, or the server reached cannot take this work now:
    /// the connection is gone, the server is shutting down or starting up (57P01 admin_shutdown, 57P02
    /// crash_shutdown, 57P03 cannot_connect_now), a class 08 connection exception, or the server is
    /// read-only (25006 read_only_sql_transaction: a standby, or a primary that was demoted). During a
    /// failover every one of these is the same fact, "no writable primary on this connection", and a
    /// new connection (libpq's `target_session_attrs=read-write`) is the remedy.
    public var isUnavailable: Bool {
        switch code {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown, .poolTimeout: return true
        case .queryFailed: return sqlState.map(Self.unavailableStates) ?? false
        case .decodingFailed: return false
        }
    }

    /// True when the connection that raised this error must not be used again: it is broken, or it
    /// reaches a server that is going away or cannot write. A pool discards such a connection, so the
    /// next request opens a new one and libpq picks whichever host is the primary now.
    public var discardsConnection: Bool {
        switch code {
        case .connectionFailed, .connectionLost, .commitOutcomeUnknown: return true
        case .queryFailed: return sqlState.map(Self.unavailableStates) ?? false || isPreparedStatementMismatch
        case .poolTimeout, .decodingFailed: return false
        }
    }

    /// True when the server did not hold the named statement this connection prepared (26000), or held
    /// another under its name (42P05): the mark of a transaction pooler between client and server that the
    /// connection did not see at startup (PostgresConnection.poolerDetected). The connection is discarded,
    /// and the next one, opened by the same pooler, runs its statements unnamed.
    public var isPreparedStatementMismatch: Bool {
        code == .queryFailed && (sqlState == "26000" || sqlState == "42P05")
    }

    static func unavailableStates(_ state: String) -> Bool {
        state.hasPrefix("08") || ["57P01", "57P02", "57P03", "25006"].contains(state)
    }

    /// Worth retrying unchanged: the database is unreachable, or the statement lost a race or ran out
    /// of a resource (40001 serialization failure, 40P01 deadlock, 55P03 lock not available, class 53
    /// insufficient resources, class 58 system error). Anything else (a constraint, bad data, a
    /// raised exception, a statement timeout) says something about the statement's input.
    public var isTransient: Bool {
        if isUnavailable || isPreparedStatementMismatch { return true }
        guard let state = sqlState else { return false }
        return ["40001", "40P01", "55P03"].contains(state) || state.hasPrefix("53") || state.hasPrefix("58")
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
