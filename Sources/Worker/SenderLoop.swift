import Foundation
import Postgres
import ServiceSupport
import Synchronization

/// What the webhook and channel senders share: a database connection of their own, the background service that
/// runs their step, the records of the answers not yet stored, and the drain that waits for the answers in flight
/// before recording them.
final class SenderLoop<Record: Sendable>: Sendable {
    /// One connection: a sender's claims and records are one statement at a time.
    let pool: PostgresPool
    private let name: String
    private let logger: Logger
    /// Set once, right after the sender's `init`: its step refers to the sender.
    private let service = LockedBox<BackgroundService?>(nil)
    /// The answers' records queued for the next flush, and whether the drain began (no more claims).
    private let state = Mutex<(finished: [Record], draining: Bool)>(([], false))

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

    /// True once `drain` began: the sender claims nothing more.
    var isDraining: Bool { state.withLock { $0.draining } }

    /// Queues an answer's record for the next `flush`. Queue it before the answer stops counting as in flight,
    /// so that the drain's last flush finds it.
    func finish(_ record: Record) { state.withLock { $0.finished.append(record) } }

    /// Hands the queued records to `store`, which removes from the front of its slice those it stored; when it
    /// throws, the rest go back to the front of the queue for the next try.
    func flush(_ store: (inout ArraySlice<Record>) throws -> Void) throws {
        let taken = state.withLock { state in
            defer { state.finished = [] }
            return state.finished
        }
        guard !taken.isEmpty else { return }
        var records = taken[...]
        do {
            try store(&records)
        } catch {
            state.withLock { $0.finished.insert(contentsOf: records, at: 0) }
            throw error
        }
    }

    /// Stops the claims, waits (until `deadline`) for `inFlight` to reach zero, stops the service and records what
    /// came back with `flush`; when that fails, logs `unrecorded` (what happens to the work whose answers were lost).
    func drain(deadline: Date, inFlight: () -> Int, flush: () throws -> Void, unrecorded: String) {
        state.withLock { $0.draining = true }
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
