import Foundation
import Postgres
import Synchronization

/// A background service's database connection: opened on first use, set up once (session
/// settings, LISTEN), dropped when the database becomes unreachable and reopened by the next use.
/// The reconnect logic of every service lives here; the backoff between attempts is
/// `BackgroundService`'s. Services that each run a statement now and then share one session:
/// `use` takes a lock, so one statement runs at a time.
public final class DatabaseSession: @unchecked Sendable {
    private let lock = NSLock()
    public let url: String
    public let options: PostgresConnectionOptions
    /// Run on every new connection before its first use.
    private let setup: (PostgresConnection) throws -> Void
    private var connection: PostgresConnection?
    private let poolerSeen = Atomic<Bool>(false)

    public init(
        url: String, options: PostgresConnectionOptions,
        setup: @escaping (PostgresConnection) throws -> Void = { _ in }
    ) {
        self.url = url
        self.options = options
        self.setup = setup
    }

    /// True once a connection of this session found a connection pooler answering for the server
    /// (PostgresConnection.poolerDetected).
    public var poolerDetected: Bool { poolerSeen.load(ordering: .relaxed) }

    /// True when the last use left an open connection.
    public var isConnected: Bool { lock.withLock { connection?.isHealthy ?? false } }

    /// Runs `body` on the connection, (re)connecting first if needed. An error that says the
    /// database is gone (`PostgresError.isUnavailable`, or anything not from Postgres) drops the
    /// connection so the next use reconnects; other errors (a failed statement) keep it.
    @discardableResult
    public func use<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            let current: PostgresConnection
            if let connection, connection.isHealthy {
                current = connection
            } else {
                connection = nil
                let fresh = try PostgresConnection(url: url, options: options)
                if fresh.poolerDetected { poolerSeen.store(true, ordering: .relaxed) }
                try setup(fresh)
                connection = fresh
                current = fresh
            }
            return try body(current)
        } catch {
            if (error as? PostgresError)?.isUnavailable ?? true { connection = nil }
            throw error
        }
    }

    /// Closes the connection (the next use opens a new one).
    public func close() { lock.withLock { connection = nil } }
}
