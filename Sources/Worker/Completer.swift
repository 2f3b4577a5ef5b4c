import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store

/// Records outcomes in batches: one statement for everything that finished while the previous
/// statement ran, and statements at most every `minimumInterval` (a few rows each at low load,
/// hundreds under load).
///
/// - A group row's members (sql/016_delivery_groups.sql) are recorded together when they can be: the
///   answered ones wait until every member of the group that this worker claimed has answered, or for
///   `groupHold` at most, so that the completion takes the group whole (sql/functions/complete_deliveries.sql).
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
    /// The time of the interval, the group holds and `waitingSince`: injected so a test moves it instead of sleeping.
    private let clock: any HeraldClock
    /// Called after each recorded batch with the ids it took off this worker's hands and the
    /// earliest time a row of it is due again.
    private let onCommitted: @Sendable ([UUID], Date?) -> Void
    /// Guards `pending`, `recording`, `groups` and `finishing`; signalled when they change.
    private let condition = NSCondition()
    /// Outcomes not yet taken into a batch, in the order they came.
    private var pending: [CompletedDelivery] = []
    /// The batch being recorded, kept until it is (a passing failure retries the same batch).
    private var recording: [CompletedDelivery] = []
    /// The groups with members claimed by this worker and not yet answered.
    private var groups: [UUID: GroupProgress] = [:]
    /// stop() was called: record what is pending, then end.
    private var finishing = false
    /// The step waits out `minimumInterval` since the last statement: an outcome added meanwhile is taken when
    /// the interval ends, so it wakes the step only if it fills a batch (a wake per outcome was a thread switch
    /// per delivery at low rates, each costing as much CPU as a tenth of the delivery).
    private var waitingForInterval = false
    /// When the last statement started, on `clock` (the step's thread only).
    private var lastStatement: Date = .distantPast

    private struct GroupProgress {
        /// Members claimed and not yet answered.
        var unanswered: Int
        /// When the group's first answer of those waiting in `pending` came, on `clock`.
        var waitingSince: Date?
    }
    private var service: BackgroundService!

    /// `onError` runs when a batch fails (before its retry).
    init(
        configuration: CompleterConfiguration, worker: String, session: DatabaseSession, metrics: WorkerMetrics,
        logger: Logger, clock: any HeraldClock, onError: @escaping @Sendable (any Error) -> Void = { _ in },
        onCommitted: @escaping @Sendable ([UUID], Date?) -> Void
    ) {
        self.configuration = configuration
        self.worker = worker
        self.session = session
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.onCommitted = onCommitted
        service = BackgroundService(
            .init(name: "herald-completer"), logger: logger,
            onError: { error in
                metrics.add(.databaseErrors)
                onError(error)
            },
            interrupt: { [unowned self] in signalChange() },
            step: { [unowned self] _ in try step() })
    }

    func start() { service.start() }

    /// Counts the group members of a claim, whose outcomes `add` will bring (the claimer's thread).
    func expect(_ claimed: [ClaimedDelivery]) {
        var members: [UUID: Int] = [:]
        for delivery in claimed {
            if let group = delivery.groupID { members[group, default: 0] += 1 }
        }
        guard !members.isEmpty else { return }
        condition.lock()
        for (group, count) in members {
            groups[group, default: GroupProgress(unanswered: 0)].unanswered += count
        }
        condition.unlock()
    }

    /// Queues one outcome (any thread).
    func add(_ delivery: CompletedDelivery) {
        condition.lock()
        pending.append(delivery)
        // The step wakes for what it can take now, and for a group's first waiting answer (to time its hold).
        var wake = true
        if let group = delivery.groupID, var progress = groups[group] {
            progress.unanswered -= 1
            wake = progress.unanswered <= 0 || progress.waitingSince == nil
            if progress.waitingSince == nil { progress.waitingSince = clock.now }
            groups[group] = progress
        }
        if waitingForInterval { wake = pending.count >= configuration.maxBatch }
        if wake { condition.broadcast() }
        condition.unlock()
    }

    /// Outcomes not yet recorded.
    var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return pending.count + recording.count
    }

    /// Records what is queued, then ends the thread. Gives up at `deadline` (the database down
    /// during a drain): the leases of what was not recorded expire and those rows are sent again.
    /// Returns true when everything was recorded.
    @discardableResult
    func stop(deadline: Date = .distantFuture) -> Bool {
        condition.lock()
        finishing = true
        condition.broadcast()
        while !pending.isEmpty || !recording.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
        let recorded = pending.isEmpty && recording.isEmpty
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
        while recording.isEmpty {
            if pending.isEmpty {
                if finishing { break }
                condition.wait()
                continue
            }
            let now = clock.now
            let next = lastStatement.addingTimeInterval(configuration.minimumInterval / .seconds(1))
            if !finishing && now < next && pending.count < configuration.maxBatch {
                // Timed out or signalled: the loop looks again either way.
                waitingForInterval = true
                wait(until: next, now: now)
                waitingForInterval = false
                continue
            }
            if let holdEnds = takeBatch(now: now) {
                wait(until: holdEnds, now: now)
            } else if recording.isEmpty {
                condition.wait()
            }
        }
        let batch = recording
        condition.unlock()
        if batch.isEmpty {
            // Finishing with nothing left: stop() ends the service now.
            service.sleep(for: .milliseconds(5))
            return
        }
        lastStatement = clock.now
        try record(batch)
        condition.lock()
        recording.removeAll(keepingCapacity: true)
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

    /// Waits for a signal or until `deadline` on `clock` (`now` on it): the condition's own deadline is on the
    /// wall clock, so it gets the span left. Called with the lock held.
    private func wait(until deadline: Date, now: Date) {
        _ = condition.wait(until: Date(timeIntervalSinceNow: deadline.timeIntervalSince(now)))
    }

    /// Moves what may be recorded now from `pending` to `recording` (at most `maxBatch`, in order, but a
    /// group begun in the batch is finished in it: past `maxBatch` by less than a group): every outcome
    /// but those of a group with members still unanswered, until its hold ends. Returns the earliest end
    /// of a hold still running, if any. Called with the lock held.
    private func takeBatch(now: Date) -> Date? {
        var kept: [CompletedDelivery] = []
        var holdEnds: Date?
        var begun: Set<UUID> = []
        let hold = configuration.groupHold / .seconds(1)
        for delivery in pending {
            if recording.count >= configuration.maxBatch && !(delivery.groupID.map { begun.contains($0) } ?? false) {
                kept.append(delivery)
                continue
            }
            if !finishing, let group = delivery.groupID, let progress = groups[group], progress.unanswered > 0,
                let since = progress.waitingSince
            {
                let ends = since.addingTimeInterval(hold)
                if ends > now {
                    kept.append(delivery)
                    holdEnds = min(holdEnds ?? ends, ends)
                    continue
                }
            }
            recording.append(delivery)
            if let group = delivery.groupID { begun.insert(group) }
        }
        // A group taken is forgotten, whole or not: members answering after a hold ended go out at once.
        for delivery in recording {
            if let group = delivery.groupID { groups[group] = nil }
        }
        pending = kept
        return holdEnds
    }

    /// Records `batch`, isolating rows that cannot be recorded. Throws only for passing failures.
    private func record(_ batch: [CompletedDelivery]) throws {
        do {
            try session.use { try store.complete(on: $0, worker: worker, batch) }
            metrics.add(.completionBatches)
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
        metrics.add(.unrecordable)
        let reason = "record_failed_\(error.sqlState ?? error.code.rawValue)"
        logger.error(
            "an outcome could not be recorded; recording the delivery as failed",
            [
                ("delivery", .string(delivery.id.uuidString.lowercased())), ("outcome", .string(delivery.outcome.name)),
                ("error", .string(String(describing: error))),
            ])
        let fallback = CompletedDelivery(
            id: delivery.id, outcome: .failed(reason: reason), token: nil,
            groupID: delivery.groupID, member: delivery.member)
        do {
            try session.use { try store.complete(on: $0, worker: worker, [fallback]) }
        } catch let second as PostgresError where !second.isTransient {
            logger.error(
                "the delivery cannot be recorded at all; its lease will expire and it will be claimed again",
                [
                    ("delivery", .string(delivery.id.uuidString.lowercased())),
                    ("error", .string(String(describing: second))),
                ])
        }
    }
}
