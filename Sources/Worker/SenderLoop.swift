import Foundation
import Postgres
import ServiceSupport

/// What the webhook and channel senders share: a database connection of their own, the background service that
/// runs their step, and the drain that waits for the answers in flight before recording them.
final class SenderLoop: Sendable {
    /// One connection: a sender's claims and records are one statement at a time.
    let pool: PostgresPool
    private let name: String
    private let logger: Logger
    /// Set once, right after the sender's `init`: its step refers to the sender.
    private let service = LockedBox<BackgroundService?>(nil)

    init(name: String, databaseURL: String, connectionOptions: PostgresConnectionOptions, logger: Logger) {
        self.name = name
        self.logger = logger
        pool = PostgresPool(
            configuration: .init(url: databaseURL, maxConnections: 1, connectionOptions: connectionOptions))
    }

    /// The sender's step, run by the service until it stops.
    func run(_ step: @escaping @Sendable (BackgroundService) throws -> Void) {
        service.set(BackgroundService(.init(name: name), logger: logger, step: step))
    }

    func start() { service.get()?.start() }

    /// Ends the service's wait now (new work arrived) instead of at the next poll.
    func wake() { service.get()?.wake() }

    /// Waits (until `deadline`) for `inFlight` to reach zero, stops the service and records what came back with
    /// `flush`; when that fails, logs `unrecorded` (what happens to the work whose answers were lost).
    func drain(deadline: Date, inFlight: () -> Int, flush: () throws -> Void, unrecorded: String) {
        while inFlight() > 0 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        service.get()?.stop(deadline: deadline)
        do {
            try flush()
        } catch {
            logger.warning(unrecorded, [("error", .string(String(describing: error)))])
        }
    }
}
