import Foundation
import Synchronization

/// A bounded pool of connections for threads that block (HTTP handler threads, CLI commands).
/// Connections are opened lazily; a broken one is discarded on return and replaced on demand, so the
/// pool recovers by itself when the database comes back.
public final class PostgresPool: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var url: String
        public var maxConnections: Int
        /// How long a caller waits for a free connection before `poolTimeout`.
        public var acquireTimeout: Duration
        /// Timeouts and the application name of every connection the pool opens.
        public var connectionOptions: PostgresConnectionOptions
        /// A connection idle at least this long is validated with a round trip before reuse, so a
        /// server restart costs no failed request. Busy connections are never idle this long.
        public var validateAfterIdle: Duration

        public init(
            url: String, maxConnections: Int = 8, acquireTimeout: Duration = .seconds(5),
            connectionOptions: PostgresConnectionOptions = .init(), validateAfterIdle: Duration = .seconds(1)
        ) {
            self.url = url
            self.maxConnections = maxConnections
            self.acquireTimeout = acquireTimeout
            self.connectionOptions = connectionOptions
            self.validateAfterIdle = validateAfterIdle
        }
    }

    public let configuration: Configuration
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    private let poolerSeen = Atomic<Bool>(false)

    /// True once a connection this pool opened found a connection pooler answering for the server
    /// (PostgresConnection.poolerDetected): its statements run unnamed (`/readyz` names the setting).
    public var poolerDetected: Bool { poolerSeen.load(ordering: .relaxed) }

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Borrows a connection for the duration of `body`. Its result may be ignored: a statement run for its
    /// effect returns what it returned.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try acquire()
        defer { release(connection) }
        return try body(connection)
    }

    /// Borrows a connection and runs `body` in a transaction on it.
    public func withTransaction<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try withConnection { try $0.transaction(body) }
    }

    /// Closes idle connections and refuses new work.
    public func close() {
        condition.lock()
        closed = true
        open -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func acquire() throws -> PostgresConnection {
        let deadline = Date().addingTimeInterval(configuration.acquireTimeout / .seconds(1))
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw PostgresError(code: .connectionFailed, serverMessage: "pool closed")
            }
            if let connection = idle.popLast() {
                condition.unlock()
                // A connection idle for a while may have been closed by a server restart.
                if ContinuousClock.now - connection.lastUsed < configuration.validateAfterIdle || connection.validate()
                {
                    return connection
                }
                discard()
                condition.lock()
                continue
            }
            if open < configuration.maxConnections {
                open += 1
                condition.unlock()
                do {
                    let connection = try PostgresConnection(
                        url: configuration.url, options: configuration.connectionOptions)
                    if connection.poolerDetected { poolerSeen.store(true, ordering: .relaxed) }
                    return connection
                } catch {
                    discard()
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw PostgresError(code: .poolTimeout)
            }
        }
    }

    private func release(_ connection: PostgresConnection) {
        guard connection.isHealthy, connection.isIdle else {
            discard()
            return
        }
        connection.lastUsed = .now
        condition.lock()
        if closed {
            open -= 1
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }

    private func discard() {
        condition.lock()
        open -= 1
        condition.signal()
        condition.unlock()
    }
}
