import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store
import Synchronization

/// One worker process's delivery engine: a claim loop that leases due rows and hands them to the
/// upstream clients, a completer that records outcomes in batches, a listener for NOTIFY, and a
/// rescuer of expired leases (run by the claim loop). See docs/architecture.md.
public final class DeliveryWorker: @unchecked Sendable {
    private struct Hold {
        /// Claimed rows not yet recorded, by id.
        var held: Set<UUID> = []
        var draining = false
        /// After the drain deadline: late answers are ignored and their rows released instead.
        var abandoned = false
        /// The earliest retry this worker scheduled (wake up for it).
        var nextRetryAt: Date?
    }

    public let configuration: WorkerConfiguration
    public let metrics: WorkerMetrics
    private let upstreams: [PushService: any DeliveryUpstream]
    private let clock: any HeraldClock
    private let logger: Logger
    private let store = DeliveryStore()
    private let wake = WakeSignal()
    private let hold = Mutex(Hold())
    private let ready = Atomic<Bool>(false)
    private let claimLoopFinished = DispatchSemaphore(value: 0)
    private var completer: Completer!
    private var listener: NotificationListener?
    private var claimThreadStarted = false

    public init(configuration: WorkerConfiguration, upstreams: [PushService: any DeliveryUpstream],
                clock: any HeraldClock = SystemClock(), metrics: WorkerMetrics = WorkerMetrics()) {
        self.configuration = configuration
        self.upstreams = upstreams
        self.clock = clock
        self.metrics = metrics
        self.logger = Logger(component: "worker", minimum: configuration.logLevel)
        self.completer = Completer(
            databaseURL: configuration.databaseURL, worker: configuration.workerID,
            maxBatch: max(configuration.batchSize, 100), metrics: metrics, logger: logger
        ) { [weak self] ids, earliestRetry in
            self?.committed(ids, earliestRetry: earliestRetry)
        }
    }

    /// True while the worker can claim (database reachable, not draining): `/readyz`.
    public var isReady: Bool { ready.load(ordering: .relaxed) }

    /// Deliveries claimed and not yet recorded.
    public var inFlight: Int { hold.withLock { $0.held.count } }

    public func start() {
        completer.start()
        if configuration.listen {
            let listener = NotificationListener(databaseURL: configuration.databaseURL, logger: logger) { [weak self] in
                self?.wake.signal(.work)
            }
            listener.start()
            self.listener = listener
        }
        claimThreadStarted = true
        let thread = Thread { [self] in claimLoop() }
        thread.name = "herald-claimer"
        thread.start()
        logger.info("worker started", [
            ("worker", .string(configuration.workerID)),
            ("upstreams", .array(upstreams.keys.map { .string($0.rawValue) }.sorted { "\($0)" < "\($1)" })),
            ("listen", .bool(configuration.listen)), ("batchSize", .number(Double(configuration.batchSize))),
        ])
    }

    /// The SIGTERM path: stop claiming, let in-flight sends finish for up to `drainTimeout`, record
    /// their outcomes, release whatever is still held, and return. Idempotent.
    public func drain() {
        let alreadyDraining = hold.withLock { hold -> Bool in
            defer { hold.draining = true }
            return hold.draining
        }
        if alreadyDraining { return }
        ready.store(false, ordering: .relaxed)
        wake.signal(.work)
        if claimThreadStarted { claimLoopFinished.wait() }
        listener?.stop()

        let deadline = Date().addingTimeInterval(configuration.drainTimeout / .seconds(1))
        while inFlight > 0 && Date() < deadline {
            wake.wait(for: [.capacity], until: min(deadline, Date().addingTimeInterval(0.05)))
        }
        // Past the deadline, answers that still arrive are not recorded: their rows are released
        // below and another worker sends them (at least once).
        hold.withLock { $0.abandoned = true }
        for upstream in upstreams.values { upstream.shutdown() }
        completer.stop()
        let leftovers = hold.withLock { Array($0.held) }
        if !leftovers.isEmpty {
            do {
                let connection = try WorkerConnections.open(configuration.databaseURL, role: "drain")
                let released = try store.release(on: connection, worker: configuration.workerID, ids: leftovers)
                logger.warning("released deliveries still in flight at the drain deadline",
                               [("released", .number(Double(released)))])
            } catch {
                logger.error("could not release held deliveries; their leases will expire",
                             [("error", .string(String(describing: error))), ("held", .number(Double(leftovers.count)))])
            }
        }
        logger.info("worker drained", [("worker", .string(configuration.workerID))])
    }

    // MARK: - Claim loop

    /// How often a claim ignores the cursors and considers every due row.
    static let fullScanInterval: TimeInterval = 5

    private func claimLoop() {
        var connection: PostgresConnection?
        var lastRescue = Date.distantPast
        var lastSnapshot = Date.distantPast
        var nextScheduled: Date?
        var failures = 0
        let services = Array(upstreams.keys).sorted { $0.rawValue < $1.rawValue }
        let rescueEvery = max(1.0, Double(configuration.leaseSeconds) / 3)
        // Where this worker's claims of each queue got to. Dropped every few seconds (and after a
        // rescue) so that rows behind a cursor (rescued, released, late commits) are claimed too.
        var cursors: [QueueCursor: Date] = [:]
        var lastFullScan = Date.distantPast
        // When the last claim that emptied the queue ended (see minimumClaimSpacing).
        var lastShortClaim = ContinuousClock.now - .seconds(1)

        while !hold.withLock({ $0.draining }) {
            do {
                if connection == nil || connection?.isHealthy == false {
                    connection = try WorkerConnections.open(configuration.databaseURL, role: "claimer")
                }
                let now = Date()
                if now.timeIntervalSince(lastRescue) >= rescueEvery {
                    let rescued = try store.rescue(on: connection!)
                    if rescued > 0 {
                        cursors.removeAll()
                        metrics.addRescued(rescued)
                        logger.info("rescued expired leases", [("rows", .number(Double(rescued)))])
                    }
                    lastRescue = now
                }
                if now.timeIntervalSince(lastSnapshot) >= 2 {
                    let snapshot = try store.snapshot(on: connection!)
                    metrics.setQueue(dueDepth: snapshot.dueDepth, oldestDueAge: snapshot.oldestDueAge)
                    nextScheduled = snapshot.nextAvailableAt
                    lastSnapshot = now
                }
                ready.store(true, ordering: .relaxed)
                failures = 0

                let capacity = configuration.maxInFlight - inFlight
                let limit = min(configuration.batchSize, capacity)
                // Wait for room rather than claiming in dribbles when nearly full.
                if limit <= 0 || (inFlight > 0 && limit < min(configuration.batchSize, configuration.maxInFlight) / 2) {
                    wake.wait(for: [.capacity], until: Date().addingTimeInterval(configuration.pollInterval / .seconds(1)))
                    continue
                }
                // Under live traffic every NOTIFY would start a claim of a handful of rows, and the
                // claims' fixed cost would crowd out the sends: let rows gather for a few ms instead.
                let sinceShort = ContinuousClock.now - lastShortClaim
                if sinceShort < configuration.minimumClaimSpacing {
                    Thread.sleep(forTimeInterval: (configuration.minimumClaimSpacing - sinceShort) / .seconds(1))
                }
                if now.timeIntervalSince(lastFullScan) >= Self.fullScanInterval {
                    cursors.removeAll()
                    lastFullScan = now
                }
                let claimed = try store.claim(on: connection!, worker: configuration.workerID, limit: limit,
                                              leaseSeconds: configuration.leaseSeconds, services: services,
                                              cursors: cursors)
                for delivery in claimed {
                    let key = QueueCursor(lane: delivery.lane, partnerID: delivery.partnerID)
                    if cursors[key].map({ delivery.availableAt > $0 }) ?? true { cursors[key] = delivery.availableAt }
                }
                metrics.addClaim()
                if !claimed.isEmpty { dispatch(claimed) }
                if claimed.count == limit { continue }
                lastShortClaim = ContinuousClock.now

                // The queue is drained: sleep until new work is announced, a scheduled row or a
                // retry comes due, or the poll interval passes.
                var wakeAt = Date().addingTimeInterval(configuration.pollInterval / .seconds(1))
                if let scheduled = nextScheduled, scheduled > Date(), scheduled < wakeAt { wakeAt = scheduled }
                if let retry = hold.withLock({ $0.nextRetryAt }), retry < wakeAt {
                    wakeAt = max(retry, Date())
                    hold.withLock { $0.nextRetryAt = nil }
                }
                wake.wait(for: [.work], until: wakeAt)
            } catch {
                ready.store(false, ordering: .relaxed)
                metrics.addDatabaseError()
                failures += 1
                if (error as? PostgresError)?.isUnavailable ?? true { connection = nil }
                logger.warning("claim failed; retrying", [("error", .string(String(describing: error)))])
                wake.wait(for: [.work], until: Date().addingTimeInterval(min(0.1 * Double(failures), 2)))
            }
        }
        claimLoopFinished.signal()
    }

    // MARK: - Sending

    private func dispatch(_ claimed: [ClaimedDelivery]) {
        hold.withLock { hold in
            for delivery in claimed { hold.held.insert(delivery.id) }
        }
        metrics.setInFlight(inFlight)
        // Counted once per service and claim, not under a lock per delivery.
        for service in PushService.allCases {
            let count = claimed.count { $0.service == service }
            if count > 0 { metrics.add(.claimed, service, count) }
        }
        for delivery in claimed {
            if let outcome = Self.outcomeWithoutSending(delivery) {
                finish(delivery, outcome)
                continue
            }
            guard let upstream = upstreams[delivery.service] else {
                // The claim asked only for configured services; a row of another means a bug.
                finish(delivery, .failed(reason: "upstream_not_configured"))
                continue
            }
            let started = ContinuousClock.now
            upstream.send(delivery) { [self] result in
                metrics.observeSend(delivery.service, seconds: (ContinuousClock.now - started) / .seconds(1))
                let outcome = configuration.retry.outcome(
                    of: result, attempts: delivery.attempts, expiresAt: delivery.expiresAt, now: clock.now,
                    random: Double.random(in: 0..<1))
                finish(delivery, outcome)
            }
        }
    }

    /// What a claimed row comes to without an upstream call, from the claim's verdict.
    static func outcomeWithoutSending(_ delivery: ClaimedDelivery) -> DeliveryOutcome? {
        switch delivery.verdict {
        case .send: return delivery.token == nil ? .tokenInvalid(reason: "no_token") : nil
        case .expired: return .expired
        case .tokenInvalid: return .tokenInvalid(reason: "token_invalidated")
        case .deviceRemoved: return .failed(reason: "device_removed")
        case .suppressed: return .suppressed
        }
    }

    private func finish(_ delivery: ClaimedDelivery, _ outcome: DeliveryOutcome) {
        if hold.withLock({ $0.abandoned }) { return }
        metrics.record(outcome, delivery.service)
        completer.add(CompletedDelivery(id: delivery.id, outcome: outcome, token: delivery.token))
    }

    private func committed(_ ids: [UUID], earliestRetry: Date?) {
        hold.withLock { hold in
            for id in ids { hold.held.remove(id) }
            if let earliestRetry, hold.nextRetryAt.map({ earliestRetry < $0 }) ?? true {
                hold.nextRetryAt = earliestRetry
            }
        }
        metrics.setInFlight(inFlight)
        wake.signal(.capacity)
        if earliestRetry != nil { wake.signal(.work) }
    }
}
