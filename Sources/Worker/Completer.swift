import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store
import Synchronization

/// Records outcomes in batches: one statement for everything that finished while the previous
/// statement ran (natural batching: one row at low load, hundreds under load). A batch that fails
/// to commit is kept and retried on a fresh connection, so no outcome is lost while the process
/// lives; if it dies, the leases expire and the rows are sent again.
final class Completer: @unchecked Sendable {
    private struct State {
        var pending: [CompletedDelivery] = []
        var stopping = false
    }

    private let databaseURL: String
    private let worker: String
    private let store = DeliveryStore()
    private let maxBatch: Int
    private let metrics: WorkerMetrics
    private let logger: Logger
    /// Called after each committed batch with the ids it recorded and the earliest retry time.
    private let onCommitted: @Sendable ([UUID], Date?) -> Void
    private let condition = NSCondition()
    private var state = State()
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    init(databaseURL: String, worker: String, maxBatch: Int, metrics: WorkerMetrics, logger: Logger,
         onCommitted: @escaping @Sendable ([UUID], Date?) -> Void) {
        self.databaseURL = databaseURL
        self.worker = worker
        self.maxBatch = maxBatch
        self.metrics = metrics
        self.logger = logger
        self.onCommitted = onCommitted
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "herald-completer"
        self.thread = thread
        thread.start()
    }

    /// Queues one outcome (any thread).
    func add(_ delivery: CompletedDelivery) {
        condition.lock()
        state.pending.append(delivery)
        condition.signal()
        condition.unlock()
    }

    /// Records what is queued, then ends the thread.
    func stop() {
        condition.lock()
        state.stopping = true
        condition.signal()
        condition.unlock()
        if thread != nil { finished.wait() }
    }

    private func run() {
        var connection: PostgresConnection?
        var failures = 0
        while true {
            condition.lock()
            while state.pending.isEmpty && !state.stopping { condition.wait() }
            if state.pending.isEmpty && state.stopping {
                condition.unlock()
                break
            }
            let count = min(state.pending.count, maxBatch)
            let batch = Array(state.pending.prefix(count))
            condition.unlock()

            do {
                if connection == nil || connection?.isHealthy == false {
                    connection = try WorkerConnections.open(databaseURL, role: "completer")
                }
                try store.complete(on: connection!, worker: worker, batch)
                failures = 0
            } catch {
                metrics.addDatabaseError()
                failures += 1
                if (error as? PostgresError)?.isUnavailable ?? true { connection = nil }
                logger.warning("recording outcomes failed; retrying", [
                    ("error", .string(String(describing: error))), ("batch", .number(Double(batch.count))),
                ])
                // Deadlocks and serialization failures are retried at once; an unreachable
                // database with a growing pause.
                Thread.sleep(forTimeInterval: min(0.05 * Double(failures), 2))
                continue
            }
            condition.lock()
            state.pending.removeFirst(count)
            condition.unlock()
            metrics.addCompletionBatch()
            var earliestRetry: Date?
            for delivery in batch {
                if case .retry(let at, _) = delivery.outcome, earliestRetry.map({ at < $0 }) ?? true {
                    earliestRetry = at
                }
            }
            onCommitted(batch.map(\.id), earliestRetry)
        }
        finished.signal()
    }
}

/// How the worker opens its connections: asynchronous commit (a claim or completion lost in a
/// database crash is rescued or re-sent; see docs/architecture.md), named for pg_stat_activity.
enum WorkerConnections {
    static func open(_ url: String, role: String) throws -> PostgresConnection {
        let connection = try PostgresConnection(url: url, applicationName: "herald-worker \(role)")
        // No JIT: the queue sample's estimates grow with a backlog, and compiling costs more than it saves.
        try connection.execute("SET synchronous_commit TO off; SET jit TO off")
        return connection
    }
}
