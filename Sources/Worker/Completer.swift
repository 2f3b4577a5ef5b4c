import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store

/// Records outcomes in batches: one statement for everything that finished while the previous
/// statement ran (natural batching: one row at low load, hundreds under load).
///
/// - A batch that fails for a passing reason (the database unreachable, a deadlock) is kept and
///   retried with the service's backoff, so no outcome is lost while the process lives; if it
///   dies, the leases expire and the rows are sent again.
/// - A batch that fails for a lasting reason (a row the statement cannot record) is split in
///   halves until the rows at fault are found; the rest are recorded. A row at fault is recorded
///   as `failed` with the error's SQLSTATE; if even that fails, it is left to its lease (the
///   rescuer returns it to the queue) and logged.
final class Completer: @unchecked Sendable {
    private let configuration: CompleterConfiguration
    private let worker: String
    private let session: DatabaseSession
    private let store = DeliveryStore()
    private let metrics: WorkerMetrics
    private let logger: Logger
    /// Called after each recorded batch with the ids it took off this worker's hands and the
    /// earliest time a row of it is due again.
    private let onCommitted: @Sendable ([UUID], Date?) -> Void
    /// Guards `pending` and `finishing`; signalled when either changes.
    private let condition = NSCondition()
    private var pending: [CompletedDelivery] = []
    /// stop() was called: record what is pending, then end.
    private var finishing = false
    private var service: BackgroundService!

    init(configuration: CompleterConfiguration, worker: String, session: DatabaseSession, metrics: WorkerMetrics,
         logger: Logger, onCommitted: @escaping @Sendable ([UUID], Date?) -> Void) {
        self.configuration = configuration
        self.worker = worker
        self.session = session
        self.metrics = metrics
        self.logger = logger
        self.onCommitted = onCommitted
        service = BackgroundService(
            .init(name: "herald-completer"), logger: logger,
            onError: { _ in metrics.addDatabaseError() },
            interrupt: { [unowned self] in signalChange() },
            step: { [unowned self] _ in try step() })
    }

    func start() { service.start() }

    /// Queues one outcome (any thread).
    func add(_ delivery: CompletedDelivery) {
        condition.lock()
        pending.append(delivery)
        condition.broadcast()
        condition.unlock()
    }

    /// Outcomes not yet recorded.
    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count
    }

    /// Records what is queued, then ends the thread. Gives up at `deadline` (the database down
    /// during a drain): the leases of what was not recorded expire and those rows are sent again.
    /// Returns true when everything was recorded.
    @discardableResult
    func stop(deadline: Date = .distantFuture) -> Bool {
        condition.lock()
        finishing = true
        condition.broadcast()
        while !pending.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
        let recorded = pending.isEmpty
        condition.unlock()
        service.stop(deadline: deadline)
        return recorded
    }

    private func signalChange() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    private func step() throws {
        condition.lock()
        while pending.isEmpty && !finishing { condition.wait() }
        let batch = Array(pending.prefix(configuration.maxBatch))
        condition.unlock()
        if batch.isEmpty {
            // Finishing with nothing left: stop() ends the service now.
            service.sleep(for: .milliseconds(5))
            return
        }
        try record(batch)
        condition.lock()
        pending.removeFirst(batch.count)
        condition.broadcast()
        condition.unlock()
        var earliestRetry: Date?
        for delivery in batch {
            switch delivery.outcome {
            case .retry(let at, _), .deferred(let at, _):
                if earliestRetry.map({ at < $0 }) ?? true { earliestRetry = at }
            default: break
            }
        }
        onCommitted(batch.map(\.id), earliestRetry)
    }

    /// Records `batch`, isolating rows that cannot be recorded. Throws only for passing failures.
    private func record(_ batch: [CompletedDelivery]) throws {
        do {
            try session.use { try store.complete(on: $0, worker: worker, batch) }
            metrics.addCompletionBatch()
        } catch let error as PostgresError where !error.isTransient {
            if batch.count > 1 {
                let middle = batch.count / 2
                try record(Array(batch[..<middle]))
                try record(Array(batch[middle...]))
                return
            }
            try recordAtFault(batch[0], error)
        }
    }

    private func recordAtFault(_ delivery: CompletedDelivery, _ error: PostgresError) throws {
        metrics.addUnrecordable()
        let reason = "record_failed_\(error.sqlState ?? error.code.rawValue)"
        logger.error("an outcome could not be recorded; recording the delivery as failed", [
            ("delivery", .string(delivery.id.uuidString.lowercased())), ("outcome", .string(delivery.outcome.name)),
            ("error", .string(String(describing: error))),
        ])
        let fallback = CompletedDelivery(id: delivery.id, outcome: .failed(reason: reason), token: nil,
                                         groupID: delivery.groupID, member: delivery.member)
        do {
            try session.use { try store.complete(on: $0, worker: worker, [fallback]) }
        } catch let second as PostgresError where !second.isTransient {
            logger.error("the delivery cannot be recorded at all; its lease will expire and it will be claimed again", [
                ("delivery", .string(delivery.id.uuidString.lowercased())),
                ("error", .string(String(describing: second))),
            ])
        }
    }
}
