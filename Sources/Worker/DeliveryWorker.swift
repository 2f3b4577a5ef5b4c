import APNs
import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store
import Synchronization

/// One worker process's delivery engine, made of background services of one shape
/// (`BackgroundService`, see docs/architecture.md):
/// - the claimer leases due rows and hands them to the upstream clients (DeliveryWorker+Claim.swift);
/// - the completer records outcomes in batches;
/// - the listener wakes the claimer on NOTIFY;
/// - the rescuer, the queue sampler and the lease extender (WorkerMaintenance.swift).
/// Upstreams that refuse Herald's own setup are paused (UpstreamPauses) and their rows deferred; a token
/// refused in words that may blame that setup is retired only once the upstream accepts another (TokenVerdicts).
public final class DeliveryWorker: @unchecked Sendable {
    struct Held {
        let service: PushService
        /// The outbox row holding the lease (ClaimedDelivery.leaseID): a group's members share one.
        let leaseID: UUID
        /// When the row's lease was last set: the claim, or the lease extender's last renewal.
        var leasedAt: Date
        /// A bulk-lane row (counted against `maxBulkInFlight`).
        let isBulk: Bool
    }

    struct Hold {
        /// Claimed rows not yet recorded, by id. Changed only through `insert`, `remove` and `renew`,
        /// which keep `bulkCount`.
        private(set) var held: [UUID: Held] = [:]
        /// Bulk-lane rows in `held`: counted as they come and go, because every claim asks, and
        /// counting the values scanned the whole table (a few thousand rows under load).
        private(set) var bulkCount = 0
        var draining = false
        /// After the drain deadline: late answers are ignored and their rows released instead.
        var abandoned = false
        /// The earliest retry this worker scheduled (wake up for it).
        var nextRetryAt: Date?

        mutating func insert(_ row: Held, for id: UUID) {
            if let replaced = held.updateValue(row, forKey: id), replaced.isBulk { bulkCount -= 1 }
            if row.isBulk { bulkCount += 1 }
        }

        mutating func remove(_ id: UUID) {
            if let removed = held.removeValue(forKey: id), removed.isBulk { bulkCount -= 1 }
        }

        /// The lease extender renewed the row's lease at `at`.
        mutating func renew(_ id: UUID, at: Date) { held[id]?.leasedAt = at }
    }

    /// What the maintenance services tell the claimer.
    struct Hints {
        /// When the next scheduled row becomes due (from the queue sampler).
        var nextScheduled: Date?
        /// A rescue returned rows behind the cursors: the next claim scans everything.
        var dropCursors = false
        /// The rows the notifications since the last claim listed (WakeUpMessage.listed), which the next claim may
        /// lease by primary key alone; `unlisted` when one woke the worker without listing its rows, or the list
        /// outgrew a batch: the next claim walks the due index.
        var listed: [UUID] = []
        var unlisted = false
        /// The rows the notifications since the last claim said an intake leased to this worker: the claimer sends,
        /// reads or releases every one of them, however many.
        var leased = Leased()
        /// Rows may be leased to this worker that it does not know of, and the claimer releases those it does not hold
        /// (DeliveryStore.releaseLeased): the listener registered again after losing its connection (rows leased to
        /// it meanwhile were never heard of), or the claimer lost its connection (a claim may have committed with
        /// its answer lost). Set again when the release fails, so it waits for the database, not for the leases.
        var releaseUnheard = false

        /// Notes a notification that wakes the claimer (`WakeUpMessage`); `batchSize` bounds the list. A payload this
        /// worker cannot read (one that does not parse, or a later version's) is a plain wake-up: the next claim walks,
        /// and as it may have named rows leased to this worker, those it does not hold are released.
        mutating func announce(_ payload: String, batchSize: Int) {
            switch WakeUpMessage(decoding: payload) {
            case .carried(let carried)?:
                guard let rows = DeliveryStore.leasedRows(carried, now: Date()) else { return announceUnreadable() }
                if leased.carried.isEmpty { leased.carriedSince = ContinuousClock.now }
                leased.carried += rows
            case .leased(let ids)?:
                leased.ids += ids
            case .listed(let ids)? where !unlisted && listed.count + ids.count <= batchSize:
                listed += ids
            case .due?, .named?, .listed?:
                announceUnlisted()
            case .later?, nil:
                announceUnreadable()
            }
        }

        /// Notes a notification that cannot be read: rows leased to this worker that it cannot name are released,
        /// and the next claim walks.
        private mutating func announceUnreadable() {
            releaseUnheard = true
            announceUnlisted()
        }

        /// Notes work no list names (the listener reconnected: notifications may have been missed).
        mutating func announceUnlisted() {
            unlisted = true
            listed = []
        }

        /// What the next claim may take by id, and clears it: nil when it must walk the due index.
        mutating func takeListed() -> [UUID]? {
            defer { listed = []; unlisted = false }
            return unlisted || listed.isEmpty ? nil : listed
        }

        /// Whether nothing but leased rows was announced since the last claim (no list, no walk asked for).
        var onlyLeased: Bool { !unlisted && listed.isEmpty }

        /// The leased rows announced since the last claim, and clears them.
        mutating func takeLeased() -> Leased {
            defer { leased = Leased() }
            return leased
        }
    }

    /// Rows an intake leased to this worker, announced by its notifications.
    struct Leased {
        /// Carried whole (WakeUpMessage.carried, DeliveryStore.leasedRows): sent without a statement while their lease
        /// is young.
        var carried: [ClaimedDelivery] = []
        /// When the oldest of `carried` was heard.
        var carriedSince = ContinuousClock.now
        /// Named by id (WakeUpMessage.leased: rows that did not fit a notification): read first.
        var ids: [UUID] = []

        var isEmpty: Bool { carried.isEmpty && ids.isEmpty }
        var count: Int { carried.count + ids.count }
        var allIDs: [UUID] { carried.map(\.id) + ids }
    }

    public let configuration: WorkerConfiguration
    public let metrics: WorkerMetrics
    let upstreams: [PushService: any DeliveryUpstream]
    let clock: any HeraldClock
    let logger: Logger
    let store = DeliveryStore()
    let wake = WakeSignal()
    let hold = Mutex(Hold())
    let hints = Mutex(Hints())
    let pauses: UpstreamPauses
    let verdicts: TokenVerdicts
    /// The database answered the claimer's last claim, and no service has found it unreachable since
    /// (`databaseFailed`).
    let databaseReachable = Atomic<Bool>(false)
    /// Passes of the Live Activity sweeper finished (`activitySweepPasses`).
    let activitySweeps = Atomic<Int>(0)
    let claimState = ClaimState()
    private var completer: Completer!
    /// Partners' delivery webhooks (nil when HERALD_WEBHOOKS_ENABLED=0).
    private var webhooks: WebhookSender?
    /// iOS 18 broadcast channels (nil without APNs, or when HERALD_CHANNELS_ENABLED=0).
    private var channels: ChannelSender?
    private var services: [BackgroundService] = []
    private var claimer: BackgroundService!
    /// The claimer's database session (its claims, releases and leased reads).
    private var claimSession: DatabaseSession!

    public init(
        configuration: WorkerConfiguration, upstreams: [PushService: any DeliveryUpstream],
        clock: any HeraldClock = SystemClock(), metrics: WorkerMetrics = WorkerMetrics()
    ) {
        self.configuration = configuration
        self.upstreams = upstreams
        self.clock = clock
        self.metrics = metrics
        metrics.setInFlightLimit(configuration.claimer.maxInFlight)
        self.logger = Logger(component: "worker", minimum: configuration.logLevel)
        self.pauses = UpstreamPauses(backoff: configuration.pauses.backoff, clock: clock)
        self.verdicts = TokenVerdicts(configuration: configuration.tokenVerdicts)
        completer = Completer(
            configuration: configuration.completer, worker: configuration.workerID,
            session: session("completer"), metrics: metrics, logger: logger, clock: clock,
            onError: { [weak self] error in self?.databaseFailed(error) }
        ) { [weak self] ids, earliestRetry in
            self?.committed(ids, earliestRetry: earliestRetry)
        }
        claimSession = session("claimer", claims: true)
        claimer = BackgroundService(
            .init(name: "herald-claimer"), logger: logger,
            onError: { [unowned self] error in
                databaseReachable.store(false, ordering: .relaxed)
                metrics.add(.databaseErrors)
                // A lost connection may have lost a committed claim's answer (a crash, a failover): the rows it
                // leased are this worker's and held by nobody. The next claim gives them back at once instead of
                // leaving them to their lease.
                if (error as? PostgresError)?.isUnavailable ?? true { hints.withLock { $0.releaseUnheard = true } }
            },
            interrupt: { [unowned self] in
                wake.signal(.work)
                wake.signal(.capacity)
            },
            step: { [unowned self] _ in try claimStep(claimSession) })
        services = WorkerMaintenance.services(for: self)
        if configuration.webhooks.enabled {
            webhooks = WebhookSender(
                configuration: configuration.webhooks, worker: configuration.workerID,
                databaseURL: configuration.databaseURL,
                connectionOptions: configuration.connectionOptions("herald-worker webhooks"), metrics: metrics,
                logger: logger, clock: clock)
        }
        if configuration.channels.enabled, let apns = (upstreams[.apns] as? APNsUpstream)?.client {
            do {
                let client = try APNsChannels(
                    client: apns, environment: configuration.channels.environment,
                    managementURL: configuration.channels.managementURL)
                channels = ChannelSender(
                    configuration: configuration.channels, channels: client, databaseURL: configuration.databaseURL,
                    connectionOptions: configuration.connectionOptions("herald-worker channels"), metrics: metrics,
                    logger: logger, clock: clock)
            } catch {
                logger.error(
                    "broadcast channels disabled: the channel management host cannot be used",
                    [("error", .string(String(describing: error)))])
            }
        }
    }

    /// A database session of this worker's, named for `role`.
    func session(_ role: String, listen: Bool = false, claims: Bool = false) -> DatabaseSession {
        DeliveryStore.workerSession(
            url: configuration.databaseURL, role: role, listen: listen, claims: claims,
            statementTimeout: configuration.statementTimeout,
            preparedStatements: configuration.databasePreparedStatements)
    }

    /// Each upstream's streams now, as its client reports them (`/metrics`).
    public var pipes: [PushService: UpstreamPipe] {
        upstreams.compactMapValues { $0.pipe() }
    }

    /// True while the worker can deliver: the database answers, it is not draining, and no
    /// upstream is paused (`/readyz`).
    public var isReady: Bool {
        databaseReachable.load(ordering: .relaxed) && !hold.withLock { $0.draining } && pauses.current.isEmpty
    }

    /// The upstreams paused because they refused Herald's credentials or configuration, by name (`apns`, `fcm`,
    /// or one APNs environment: `apns-sandbox`), with the upstream's reason (`/readyz`, the heartbeat).
    public var pausedUpstreams: [String: String] {
        Dictionary(uniqueKeysWithValues: pauses.current.map { ($0.key.name, $0.value.reason) })
    }

    public var isDatabaseReachable: Bool { databaseReachable.load(ordering: .relaxed) }
    public var isDraining: Bool { hold.withLock { $0.draining } }

    /// True once the claimer found a connection pooler answering for the database (its statements run unnamed).
    public var poolerDetected: Bool { claimSession.poolerDetected }

    /// A service's statement failed: when the database is unreachable, `/readyz` says so until the next claim
    /// succeeds. The claimer alone would miss an outage while it waits for room (sends slow, outcomes not
    /// recordable) and tries no claim; the listener's connection and the completer notice it.
    func databaseFailed(_ error: any Error) {
        if (error as? PostgresError)?.isUnavailable ?? true { databaseReachable.store(false, ordering: .relaxed) }
    }

    /// A broadcast channel changed (the listener's notification): the channel sender looks at once.
    func wakeChannels() { channels?.wake() }

    /// Passes of the Live Activity sweeper finished since start: what a test waits on to know a sweep ran (it
    /// measures the start confirmation and TTLs on the database's clock, so no injected clock moves it).
    public var activitySweepPasses: Int { activitySweeps.load(ordering: .relaxed) }

    /// Deliveries claimed and not yet recorded.
    public var inFlight: Int { hold.withLock { $0.held.count } }
    /// Bulk-lane rows among them.
    var bulkInFlight: Int { hold.withLock { $0.bulkCount } }

    public func start() {
        // The connections open while the first claim runs, not after it: a fresh worker's first rows would
        // otherwise wait for the TLS set-up and handshakes (about a quarter of a second).
        for upstream in upstreams.values { upstream.connect() }
        completer.start()
        for service in services { service.start() }
        claimer.start()
        webhooks?.start()
        channels?.start()
        logger.info(
            "worker started",
            [
                ("worker", .string(configuration.workerID)),
                ("upstreams", .array(upstreams.keys.map(\.rawValue).sorted().map { .string($0) })),
                ("listen", .bool(configuration.listener.enabled)),
                ("batchSize", .number(Double(configuration.claimer.batchSize))),
                ("allocator", .string(Allocator.name)),
            ])
    }

    /// The SIGTERM path: stop claiming, let in-flight sends finish, record their outcomes, release
    /// whatever is still held, and return, all within `drainTimeout` even with the database down
    /// (what could not be recorded or released is rescued after its lease). Idempotent.
    public func drain() {
        let alreadyDraining = hold.withLock { hold -> Bool in
            defer { hold.draining = true }
            return hold.draining
        }
        if alreadyDraining { return }
        let started = Date()
        let drainSeconds = configuration.drainTimeout / .seconds(1)
        let deadline = started.addingTimeInterval(drainSeconds)
        // Sends get most of the time; recording and releasing what they leave get the rest.
        let sendDeadline = started.addingTimeInterval(drainSeconds * 0.7)
        claimer.stop(deadline: sendDeadline)
        // From the next intake transaction on, no row is leased to this worker; the rows leased before are released
        // below with the rest.
        if configuration.listener.enabled {
            withDrainConnection("withdraw the worker's lease registration", by: sendDeadline) {
                [store] connection, worker in
                try store.unregisterListeners(on: connection, worker: worker)
            }
        }
        // Suspect verdicts waiting for a success would hold the drain to its deadline: their rows go back now,
        // attempts unspent, and the next worker's sends decide.
        for suspect in verdicts.releaseAll() {
            finish(suspect.delivery, .deferred(at: clock.now, reason: suspect.reason))
        }
        // Webhooks drain beside the deliveries: their answers are waited for and recorded.
        let webhooksDrained = DispatchGroup()
        if let webhooks {
            let deadline = started.addingTimeInterval(drainSeconds * 0.85)
            DispatchQueue.global().async(group: webhooksDrained) { webhooks.drain(deadline: deadline) }
        }
        // Channel calls go over the APNs connections, which close at the send deadline.
        if let channels {
            DispatchQueue.global().async(group: webhooksDrained) { channels.drain(deadline: sendDeadline) }
        }
        while inFlight > completer.backlog && Date() < sendDeadline {
            wake.wait(for: [.capacity], until: min(sendDeadline, Date().addingTimeInterval(0.05)))
        }
        // Past this point answers that still arrive are not recorded: their rows are released
        // below and another worker sends them (at least once).
        hold.withLock { $0.abandoned = true }
        for upstream in upstreams.values { upstream.shutdown() }
        let recordDeadline = started.addingTimeInterval(drainSeconds * 0.85)
        if !completer.stop(deadline: recordDeadline) {
            logger.warning(
                "could not record every outcome before the drain deadline; their leases will expire",
                [("unrecorded", .number(Double(completer.backlog)))])
        }
        for service in services { service.stop(deadline: recordDeadline) }
        _ = webhooksDrained.wait(timeout: .now() + max(0, recordDeadline.timeIntervalSinceNow))
        releaseLeftovers(by: deadline)
        logger.info("worker drained", [("worker", .string(configuration.workerID))])
    }

    /// Gives back rows still held (not sent, or sent and not recorded) so another worker takes them
    /// at once instead of after their lease, if the database answers before `deadline`; with the listener, every row
    /// still leased to this worker, held or not (an intake may have leased rows it never read).
    private func releaseLeftovers(by deadline: Date) {
        let leftovers = hold.withLock { Array(Set($0.held.values.map(\.leaseID))) }
        guard !leftovers.isEmpty || configuration.listener.enabled else { return }
        withDrainConnection("release held deliveries", by: deadline, held: leftovers.count) {
            [store] connection, worker in
            // Every row leased to this worker: the held ones and any an intake leased that it never read.
            let count = try store.releaseLeased(on: connection, worker: worker)
            if count > 0 || !leftovers.isEmpty {
                self.logger.warning(
                    "released deliveries still held at the drain deadline", [("released", .number(Double(count)))])
            }
        }
    }

    /// Runs `body` on a connection of its own, if the database answers before `deadline`: a draining worker's
    /// statements, which must not hold the process past its deadline when the database stopped answering. What could
    /// not be done is logged with `what` (and the `held` rows whose leases will then expire).
    private func withDrainConnection(
        _ what: String, by deadline: Date, held: Int = 0,
        _ body: @escaping @Sendable (PostgresConnection, String) throws -> Void
    ) {
        let remaining = deadline.timeIntervalSinceNow
        guard remaining >= 1 else {
            logger.warning("no time left to \(what); leases will expire", [("held", .number(Double(held)))])
            return
        }
        let options = {
            var options = configuration.connectionOptions("herald-worker drain")
            options.connectTimeout = .seconds(Int64(min(remaining, 5)))
            options.statementTimeout = .milliseconds(Int64(remaining * 1000))
            return options
        }()
        let done = DispatchSemaphore(value: 0)
        let worker = configuration.workerID
        let logger = logger
        // On its own thread, so a database that stopped answering cannot hold the process past the deadline.
        Thread.detachNewThread {
            do {
                let connection = try PostgresConnection(url: self.configuration.databaseURL, options: options)
                try body(connection, worker)
            } catch {
                logger.error(
                    "could not \(what); leases will expire",
                    [("error", .string(String(describing: error))), ("held", .number(Double(held)))])
            }
            done.signal()
        }
        _ = done.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow))
    }

    // MARK: - Sending

    func dispatch(_ claimed: [ClaimedDelivery], probe: Bool) {
        let now = clock.now
        // A probe claim may be a whole group row: its first member that is sent is the probe (one answer
        // decides the pause, UpstreamPauses); the others go out as any row does.
        let probeID = probe ? claimed.first(where: { Self.outcomeWithoutSending($0) == nil })?.id : nil
        hold.withLock { hold in
            for delivery in claimed {
                hold.insert(
                    Held(
                        service: delivery.service, leaseID: delivery.leaseID, leasedAt: now,
                        isBulk: delivery.lane != 0), for: delivery.id)
            }
        }
        metrics.setInFlight(inFlight)
        completer.expect(claimed)
        // Counted once per service and claim, not under a lock per delivery.
        for service in PushService.allCases {
            let count = claimed.count { $0.service == service }
            if count > 0 { metrics.add(.claimed, service, count) }
        }
        var admissions: [String: UpstreamPauses.Admission] = [:]
        for delivery in claimed {
            if let outcome = Self.outcomeWithoutSending(delivery) {
                finish(delivery, outcome, judged: false)
                continue
            }
            guard let upstream = upstreams[delivery.service] else {
                // The claim asked only for configured services; a row of another means a bug.
                finish(delivery, .failed(reason: "upstream_not_configured"))
                continue
            }
            var isProbe = delivery.id == probeID
            if delivery.service == .apns {
                // An environment paused alone (UpstreamPauses): decided once per environment and claim.
                let admission = admissions[delivery.environment] ?? pauses.admit(PauseScope(delivery))
                switch admission {
                case .wait(let until, let reason):
                    admissions[delivery.environment] = admission
                    if isProbe { pauses.probeUndecided(PauseScope(delivery.service)) }
                    finish(delivery, .deferred(at: until, reason: reason), judged: false)
                    continue
                case .probe:
                    // The others of this claim go with it, as a group row's members go with the first.
                    isProbe = true
                    admissions[delivery.environment] = .send
                case .send:
                    admissions[delivery.environment] = .send
                }
            }
            let started = ContinuousClock.now
            upstream.send(delivery) { [self, isProbe] result in
                let seconds = (ContinuousClock.now - started) / .seconds(1)
                answered(result, for: delivery, probe: isProbe, sendSeconds: seconds)
            }
        }
    }

    /// One upstream answer: a suspect verdict waits for the upstream's word on another token (TokenVerdicts);
    /// a success settles the verdicts held for its upstream; anything else is the delivery's outcome.
    private func answered(_ result: DeliveryResult, for delivery: ClaimedDelivery, probe: Bool, sendSeconds: Double) {
        if case .tokenSuspect(let reason) = result {
            return suspected(delivery, reason: reason, probe: probe)
        }
        var result = result
        // The answer's time when the upstream gave none: a host registration after it wins
        // (sql/functions/put_device.sql).
        if case .tokenInvalid(let reason, nil) = result { result = .tokenInvalid(reason: reason, since: clock.now) }
        finish(delivery, outcome(of: result, for: delivery, probe: probe), sendSeconds: sendSeconds)
        guard case .sent = result else { return }
        for suspect in verdicts.accepted(delivery) {
            finish(suspect.delivery, .tokenInvalid(reason: suspect.reason, since: suspect.at))
        }
    }

    private func suspected(_ delivery: ClaimedDelivery, reason: String, probe: Bool) {
        let service = delivery.service
        metrics.addSuspect(service)
        if probe {
            // Not a setup fault, and not proof of health either: the upstream opens again, and if the fault is
            // Herald's, the verdicts of the next sends make another storm.
            if resumed(delivery) {
                logger.info(
                    "the probe's token was refused, not Herald's setup; resuming",
                    [
                        ("upstream", .string(service.rawValue)), ("reason", .string(reason)),
                    ])
            }
        } else if let pause = pauses.current[PauseScope(service)] ?? pauses.current[PauseScope(delivery)] {
            // Paused since the send left: it waits with the rest.
            return finish(delivery, .deferred(at: max(pause.until, clock.now), reason: reason))
        }
        switch verdicts.suspect(delivery, reason: reason, now: clock.now) {
        case .held:
            // The claimer recomputes its sleep with the new verdict's deadline.
            wake.signal(.work)
        case .storm(let stormReason, let storms, let released):
            let until = pauses.fault(PauseScope(service), reason: stormReason, wasProbe: false, failures: storms)
            metrics.addSetupFault(service)
            logger.error(
                "many tokens refused with no success between: Herald's setup, not the tokens; pausing the upstream",
                [
                    ("upstream", .string(service.rawValue)), ("environment", .string(delivery.environment)),
                    ("reason", .string(stormReason)),
                    ("tokens", .number(Double(configuration.tokenVerdicts.stormTokens))),
                    ("windowSeconds", .number(configuration.tokenVerdicts.stormWindow / .seconds(1))),
                    ("until", .string(ISO8601.format(until))),
                ])
            for suspect in released {
                finish(suspect.delivery, .deferred(at: until, reason: suspect.reason))
            }
            wake.signal(.work)
        }
    }

    /// Suspect verdicts whose wait ended with no success of their upstream: tried again later, attempts unspent.
    func deferUnconfirmedVerdicts() {
        let now = clock.now
        for suspect in verdicts.expired(now: now) {
            finish(suspect.delivery, .deferred(at: verdicts.recheckAt(suspect, now: now), reason: suspect.reason))
        }
    }

    /// What one answer comes to. A setup fault pauses the upstream and defers the row to the
    /// pause's end, its attempt unspent; any other answer to a probe resumes the upstream.
    private func outcome(of result: DeliveryResult, for delivery: ClaimedDelivery, probe: Bool) -> DeliveryOutcome {
        if case .setupFault(let reason) = result {
            let scope = PauseScope(fault: reason, of: delivery)
            let until = pauses.fault(scope, reason: reason, wasProbe: probe)
            if probe {
                for other in [PauseScope(delivery.service), PauseScope(delivery)] where other != scope {
                    pauses.probeUndecided(other)
                }
            }
            metrics.addSetupFault(delivery.service)
            logger.error(
                "the upstream refused Herald's credentials or configuration; pausing it",
                [
                    ("upstream", .string(scope.name)), ("reason", .string(reason)),
                    ("until", .string(ISO8601.format(until))),
                ])
            wake.signal(.work)
            return .deferred(at: until, reason: reason)
        }
        if probe && resumed(delivery) {
            logger.info(
                "the upstream accepts Herald's setup again; resuming",
                [
                    ("upstream", .string(PauseScope(delivery).name))
                ])
            wake.signal(.work)
        }
        // Only a retry's jitter reads the random number, and drawing one costs a getrandom system
        // call (SystemRandomNumberGenerator): not one per sent delivery.
        let random: Double = if case .retry = result { Double.random(in: 0..<1) } else { 0 }
        return configuration.retry.outcome(
            of: result, attempts: delivery.attempts, expiresAt: delivery.expiresAt,
            now: clock.now, random: random)
    }

    /// A probe of `delivery`'s upstream (or of its environment) was answered, not with a setup fault: whatever
    /// paused either resumes. True when a pause ended.
    private func resumed(_ delivery: ClaimedDelivery) -> Bool {
        let whole = pauses.accepted(PauseScope(delivery.service))
        let environment = pauses.accepted(PauseScope(delivery))
        return whole || environment
    }

    /// What a claimed row comes to without an upstream call, from the claim's verdict.
    static func outcomeWithoutSending(_ delivery: ClaimedDelivery) -> DeliveryOutcome? {
        switch delivery.verdict {
        case .send: return delivery.token == nil ? .tokenInvalid(reason: "no_token") : nil
        case .expired: return .expired
        case .tokenInvalid: return .tokenInvalid(reason: "token_invalidated")
        case .deviceRemoved: return .failed(reason: "device_removed")
        case .suppressed: return .suppressed()
        case .superseded: return .superseded
        case .cancelled: return .cancelled(reason: "partner_revoked")
        // The host's guards (functions/user_guards.sql): the row goes back until the quiet hours end, its attempt
        // unspent, as a paused upstream's does.
        case .held: return .deferred(at: delivery.heldUntil ?? delivery.availableAt, reason: "quiet_hours")
        case .userCap: return .suppressed(reason: "user_cap")
        }
    }

    /// `judged`: an upstream answered about the delivery's token (a claim's verdict, such as a token already
    /// invalid, invalidates nothing again).
    private func finish(
        _ delivery: ClaimedDelivery, _ outcome: DeliveryOutcome, sendSeconds: Double? = nil,
        judged: Bool = true
    ) {
        if hold.withLock({ $0.abandoned }) { return }
        metrics.record(outcome, delivery.service, sendSeconds: sendSeconds)
        completer.add(
            CompletedDelivery(
                id: delivery.id, outcome: outcome, token: judged ? delivery.token : nil,
                groupID: delivery.groupID, member: delivery.member))
    }

    private func committed(_ ids: [UUID], earliestRetry: Date?) {
        hold.withLock { hold in
            for id in ids { hold.remove(id) }
            if let earliestRetry, hold.nextRetryAt.map({ earliestRetry < $0 }) ?? true {
                hold.nextRetryAt = earliestRetry
            }
        }
        metrics.setInFlight(inFlight)
        wake.signal(.capacity)
        if earliestRetry != nil { wake.signal(.work) }
    }
}

extension PauseScope {
    /// A row's environment scope: its APNs environment, or the whole of FCM.
    init(_ delivery: ClaimedDelivery) {
        self.init(delivery.service, environment: delivery.service == .apns ? delivery.environment : nil)
    }

    /// What a setup fault answered for `delivery` pauses: its APNs environment when the fault is that
    /// environment's alone (APNsResponseClassifier.environmentReasons), else the whole upstream.
    init(fault reason: String, of delivery: ClaimedDelivery) {
        let alone = APNsResponseClassifier.environmentReasons.contains(APNsErrorReason(rawValue: reason))
        self = delivery.service == .apns && alone ? PauseScope(delivery) : PauseScope(delivery.service)
    }
}
