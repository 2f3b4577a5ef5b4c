import Foundation
import Postgres
import ServiceSupport
import Store

/// Tells the workers that new deliveries are due (NOTIFY herald_deliveries), or that a broadcast channel changed
/// (NOTIFY herald_channels), from its own thread and connection, outside the write's transaction, and at most
/// once per `minimumInterval`.
///
/// A NOTIFY inside every write would serialize the commits on Postgres' notification queue lock; one
/// coalesced NOTIFY per few milliseconds costs little and still wakes a worker within milliseconds. If a
/// NOTIFY is lost (connection failure), the workers' poll fallback finds the rows. The one exception is the
/// batched push write (`IntakeWriter`): an intake writes one batch at a time, so its NOTIFY goes inside the
/// batch's transaction, naming the worker `channelForWrite` gives, and costs no thread hand-over nor transaction
/// of its own (docs/performance.md, *What bounds each figure*).
///
/// Each deliveries NOTIFY names one worker, the workers taking turns of `turnLength` (`DeliveryStore.notifyWorkers`):
/// every worker woken for one push would claim, and all but one would find nothing (with two workers, two claims
/// a push at low rates, the largest part of Postgres' CPU per push). The workers are their listener connections as
/// pg_stat_activity lists them, read again every `listenerRefresh`; with none listed, every worker is woken.
///
/// A write names the lease its due rows are written under, the one the named worker registered (`DeliveryLease`), only
/// while the list is fresh: a list older than `listenerRefresh` may name a worker that stopped, whose rows would wait
/// for their lease to end. herald_intake_push also leases only while the registration stands: a draining worker
/// withdraws it (DeliveryWorker.drain), and a listener that reconnected replaced it.
final class DeliveryNotifier: @unchecked Sendable {
    /// How long a list of the workers' listeners is used. A worker started meanwhile is woken by its own
    /// poll until then; one that stopped leaves its share of notifications to the others' poll.
    static let listenerRefresh: Duration = .seconds(1)
    /// How long one worker is named before the next one's turn: several of its claim spacings, so under live
    /// traffic one worker claims what is due while the others sleep. Named in turn one NOTIFY at a time (1 ms
    /// apart), the workers all claimed every few ms, and a third of the claims found that another had taken
    /// their rows (docs/performance.md, *What bounds each figure*).
    static let turnLength: Duration = .milliseconds(10)

    private let minimumInterval: Duration
    private let session: DatabaseSession
    private let store = DeliveryStore()
    private let condition = NSCondition()
    private var requested = false
    private var requestedChannels = false
    private var stopping = false
    private var service: BackgroundService!
    // The turn, guarded by `condition`: read by the notifier's thread and by the intake writer's leaders.
    private var listeners: [WorkerListener] = []
    private var listenersReadAt: ContinuousClock.Instant?
    private var refreshRequested = false
    private var nextListener = 0
    private var turnStartedAt: ContinuousClock.Instant?
    // Used by the notifier's thread only.
    private var lastNotify: ContinuousClock.Instant?

    init(databaseURL: String, options: PostgresConnectionOptions, minimumInterval: Duration, logger: Logger) {
        self.minimumInterval = minimumInterval
        session = DatabaseSession(url: databaseURL, options: options)
        service = BackgroundService(
            .init(name: "herald-notifier"), logger: logger,
            interrupt: { [unowned self] in
                condition.lock()
                stopping = true
                condition.broadcast()
                condition.unlock()
            },
            step: { [unowned self] service in try step(service) })
    }

    func start() { service.start() }

    /// Asks for a NOTIFY soon (cheap: sets a flag).
    func signal() {
        condition.lock()
        requested = true
        condition.signal()
        condition.unlock()
    }

    /// Asks for a NOTIFY of the channel senders soon (cheap: sets a flag).
    func signalChannels() {
        condition.lock()
        requestedChannels = true
        condition.signal()
        condition.unlock()
    }

    func stop() { service.stop() }

    /// What a write's own NOTIFY names: the channel of the worker whose turn it is, or every worker's while none is
    /// listed, and that worker's lease while the list is fresh. A list older than `listenerRefresh` is used meanwhile,
    /// without leases, and read again on the notifier's thread.
    func wakeUpForWrite() -> DeliveryWakeUp {
        condition.lock()
        defer { condition.unlock() }
        let now = ContinuousClock.now
        let stale = listenersAreStale(at: now)
        if stale && !refreshRequested {
            refreshRequested = true
            condition.signal()
        }
        let listener = turn(at: now)
        return DeliveryWakeUp(channel: DeliveryStore.channel(listener?.pid), lease: stale ? nil : listener?.lease)
    }

    /// One NOTIFY for every request since the last, at least `minimumInterval` after the last. The wait comes
    /// before a NOTIFY, and only when the last was that recent: at low rates each push's NOTIFY goes at once
    /// and the thread then sleeps until the next push (a sleep after every NOTIFY was one more thread switch a
    /// push). A failure is logged by the service (the workers find the rows by polling) and retried with its
    /// backoff on a new connection.
    private func step(_ service: BackgroundService) throws {
        condition.lock()
        while !requested && !requestedChannels && !refreshRequested && !stopping { condition.wait() }
        let notifying = requested || requestedChannels
        condition.unlock()
        if notifying, let lastNotify {
            let since = ContinuousClock.now - lastNotify
            if since < minimumInterval { service.sleep(for: minimumInterval - since) }
        }
        condition.lock()
        let deliveries = requested && !stopping, channels = requestedChannels && !stopping
        let refresh = !stopping && (refreshRequested || (deliveries && listenersAreStale(at: .now)))
        (requested, requestedChannels) = (false, false)
        condition.unlock()
        guard deliveries || channels || refresh else { return }
        if deliveries || channels { lastNotify = ContinuousClock.now }
        try session.use { connection in
            if refresh {
                // A failure leaves the request standing: the service retries after its backoff.
                let read = try store.listeners(on: connection)
                condition.lock()
                (listeners, listenersReadAt, refreshRequested) = (read, .now, false)
                condition.unlock()
            }
            if deliveries {
                condition.lock()
                let listener = turn(at: .now)
                condition.unlock()
                try store.notifyWorkers(on: connection, listener: listener?.pid)
            }
            if channels { try store.notifyChannelsChanged(on: connection) }
        }
    }

    /// Whether the workers' listeners were read more than `listenerRefresh` ago (or never). Called with `condition` held.
    private func listenersAreStale(at now: ContinuousClock.Instant) -> Bool {
        listenersReadAt.map { now - $0 >= Self.listenerRefresh } ?? true
    }

    /// The listener of the worker whose turn it is (the next one once `turnLength` has passed), or nil when no
    /// worker listens. Called with `condition` held.
    private func turn(at now: ContinuousClock.Instant) -> WorkerListener? {
        guard !listeners.isEmpty else { return nil }
        if turnStartedAt.map({ now - $0 >= Self.turnLength }) ?? true {
            nextListener = (nextListener + 1) % listeners.count
            turnStartedAt = now
        }
        return listeners[nextListener % listeners.count]
    }
}
