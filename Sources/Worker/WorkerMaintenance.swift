import Foundation
import HeraldCore
import Postgres
import ServiceSupport
import Store
import Synchronization

/// The worker's services besides the claimer and the completer, each a `BackgroundService` with
/// its settings (WorkerServiceConfigurations.swift). The listener has its own session (it waits on
/// it); the rescuer, the sampler, the queue gauge and the lease extender each run a statement now and then
/// and share one (`maintenance`), so a worker holds four connections, not six:
/// - listener: LISTENs on the deliveries channel and wakes the claimer on every notification meant for this
///   worker, with the rows it lists (the claimer's poll fallback covers the time it is reconnecting), and on the
///   broadcast channels' one, which wakes the channel sender;
/// - rescuer: returns rows whose lease expired (a crashed worker's) to pending;
/// - queue sampler: when the next scheduled row is due (the claimer sleeps until then);
/// - queue gauge: due rows and oldest due age per lane, the metrics operators alert and autoscalers
///   scale on (slower than the sampler: a count costs more than finding the queue heads);
/// - lease extender: renews the leases of rows whose lease was set more than a third of a lease ago;
/// - activity sweeper: sends scheduled Live Activity starts that came due (on the worker's clock) and ends Live
///   Activities at their TTL, one short batch per use of the session;
/// - heartbeat: the worker's row in worker_heartbeats (what the console and `heraldctl workers` show).
enum WorkerMaintenance {
    static func services(for worker: DeliveryWorker) -> [BackgroundService] {
        let maintenance = worker.session("maintenance")
        var services = [
            rescuer(worker, maintenance), sampler(worker, maintenance), queueGauge(worker, maintenance),
            leaseExtender(worker, maintenance), heartbeat(worker, maintenance),
        ]
        if worker.configuration.activitySweeper.enabled { services.append(activitySweeper(worker, maintenance)) }
        if worker.configuration.listener.enabled { services.append(listener(worker)) }
        return services
    }

    static func listener(_ worker: DeliveryWorker) -> BackgroundService {
        let session = worker.session(DeliveryStore.listenerRole(serving: worker.upstreams.keys), listen: true)
        let slice = worker.configuration.listener.waitSlice
        // The listener connection's server process, asked once per connection: the intake's NOTIFY names this
        // worker by the channel it makes (DeliveryStore.workerChannel).
        let serverPID = Mutex<Int32>(0)
        // Registered with the worker's lease name, intakes lease the rows they notify it of to it (and carry them in the
        // notification, WakeUpMessage.carried); not while draining. After the first connection (a server process
        // known), rows leased while it was lost were never heard of.
        let workerID = worker.configuration.workerID
        let leaseSeconds = worker.configuration.claimer.leaseSeconds
        // With the cap per user on, every partner push must be counted by a claim: intakes lease this worker nothing.
        let leases = worker.configuration.claimer.userMaxPushesPerHour == 0
        return BackgroundService(
            .init(name: "herald-listener", backoff: .init(base: .milliseconds(250), maximum: .seconds(2))),
            logger: worker.logger,
            onError: { [weak worker] error in
                session.close()
                worker?.databaseFailed(error)
            }
        ) { [weak worker] service in
            // A pooler answers for the database: a LISTEN through it is never heard, so the listener parks and the
            // claimer polls, as with HERALD_WORKER_LISTEN=0 (docs/deployment.md, "Connection poolers").
            if session.poolerDetected {
                _ = service.sleep(for: .seconds(3600))
                return
            }
            let wasConnected = session.isConnected
            let heard: (notifications: [PostgresNotification], pid: Int32)? = try session.use { connection in
                if connection.poolerDetected { return nil }
                if !wasConnected {
                    let draining = worker?.isDraining ?? true
                    let pid = try DeliveryStore().listenAsWorker(
                        on: connection,
                        leasingTo: draining || !leases ? nil : workerID,
                        leaseSeconds: leaseSeconds)
                    let reconnected = serverPID.withLock { previous in
                        defer { previous = pid }
                        return previous != 0
                    }
                    if reconnected { worker?.hints.withLock { $0.releaseUnheard = true } }
                }
                return (try connection.waitForNotifications(timeout: slice), serverPID.withLock { $0 })
            }
            guard let (notifications, pid) = heard else {
                session.close()
                worker?.logger.warning(
                    "a connection pooler answers for the database: LISTEN cannot be heard through it, so the worker"
                        + " claims every HERALD_POLL_INTERVAL_MS; set HERALD_WORKER_LISTEN=0 to say so")
                return
            }
            // Work may have arrived while not listening. New deliveries wake this worker when the intake chose it
            // (or no worker); a channel's change is for every channel sender.
            let waking = notifications.filter { DeliveryStore.wakes($0, listenerPID: pid) }
            if !wasConnected || !waking.isEmpty, let worker {
                let batchSize = worker.configuration.claimer.batchSize
                worker.hints.withLock { hints in
                    if !wasConnected { hints.announceUnlisted() }
                    for notification in waking { hints.announce(notification.payload, batchSize: batchSize) }
                }
                worker.wake.signal(.work)
            }
            if !wasConnected || notifications.contains(where: { $0.channel == ChannelSyncStore.notificationChannel }) {
                worker?.wakeChannels()
            }
        }
    }

    static func rescuer(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let settings = worker.configuration.rescuer
        let interval = settings.interval(leaseSeconds: worker.configuration.claimer.leaseSeconds)
        return BackgroundService(
            .init(name: "herald-rescuer"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            let rescued = try session.use { try worker.store.rescue(on: $0, limit: settings.limit) }
            if rescued > 0 {
                worker.hints.withLock { $0.dropCursors = true }
                worker.metrics.add(.rescued, rescued)
                worker.logger.info("rescued expired leases", [("rows", .number(Double(rescued)))])
                worker.wake.signal(.work)
            }
            service.sleep(for: interval)
        }
    }

    static func sampler(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let interval = worker.configuration.sampler.interval
        return BackgroundService(
            .init(name: "herald-sampler"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            let next = try session.use { try worker.store.nextAvailableAt(on: $0) }
            worker.hints.withLock { $0.nextScheduled = next }
            service.sleep(for: interval)
        }
    }

    static func queueGauge(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let interval = worker.configuration.queueGauge.interval
        let store = QueueGaugeStore()
        return BackgroundService(
            .init(name: "herald-queue-gauge"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            let lanes = try session.use { try store.gauges(on: $0) }
            worker.metrics.setLanes(lanes)
            service.sleep(for: interval)
        }
    }

    static func leaseExtender(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let leaseSeconds = worker.configuration.claimer.leaseSeconds
        let interval = worker.configuration.leaseExtender.interval(leaseSeconds: leaseSeconds)
        return BackgroundService(
            .init(name: "herald-lease-extender"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            let now = worker.clock.now
            let cutoff = now.addingTimeInterval(-(interval / .seconds(1)))
            let long = worker.hold.withLock { hold in hold.held.filter { $0.value.leasedAt <= cutoff }.map(\.key) }
            if !long.isEmpty {
                // A group's members share one lease: its row is renewed once.
                let rows = worker.hold.withLock { hold in Array(Set(long.compactMap { hold.held[$0]?.leaseID })) }
                let renewed = try session.use {
                    try worker.store.extendLeases(
                        on: $0, worker: worker.configuration.workerID, ids: rows,
                        leaseSeconds: leaseSeconds)
                }
                worker.hold.withLock { hold in
                    for id in long { hold.renew(id, at: now) }
                }
                worker.metrics.add(.leasesExtended, renewed)
            }
            // Checked twice per interval, so a lease is renewed at most half a lease after it was set.
            service.sleep(for: interval / 2)
        }
    }

    static func activitySweeper(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let settings = worker.configuration.activitySweeper
        return BackgroundService(
            .init(name: "herald-activity-sweeper"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            // Scheduled starts first, so a start due now is not a sweep late; batch after batch while full ones come
            // back; the session is free between them.
            var started = 0, refused = 0
            while !service.isStopping {
                let now = worker.clock.now
                let batch = try session.use {
                    try ActivityStore.startDue(on: $0, now: now, limit: settings.batchSize)
                }
                started += batch.started
                refused += batch.refused
                if batch.started + batch.refused < settings.batchSize { break }
            }
            if started > 0 {
                worker.metrics.add(.activityScheduledStarts, started)
                worker.wake.signal(.work)
            }
            if refused > 0 {
                worker.metrics.add(.activityScheduledRefused, refused)
                worker.logger.info(
                    "scheduled live activity starts refused when due", [("activities", .number(Double(refused)))])
            }
            var expired = 0
            while !service.isStopping {
                let batch = try session.use { try ActivityStore.expire(on: $0, limit: settings.batchSize) }
                expired += batch
                if batch < settings.batchSize { break }
            }
            if expired > 0 {
                worker.metrics.add(.activitiesExpired, expired)
                worker.logger.info("ended live activities at their TTL", [("activities", .number(Double(expired)))])
                worker.wake.signal(.work)
            }
            let confirmSeconds = Int(settings.startConfirmation.components.seconds)
            var unconfirmed = 0
            while !service.isStopping {
                let batch = try session.use {
                    try ActivityStore.unconfirm(on: $0, seconds: confirmSeconds, limit: settings.batchSize)
                }
                unconfirmed += batch
                if batch < settings.batchSize { break }
            }
            if unconfirmed > 0 {
                worker.metrics.add(.activityStartsUnconfirmed, unconfirmed)
                worker.logger.info(
                    "live activity starts that created nothing", [("devices", .number(Double(unconfirmed)))])
            }
            worker.activitySweeps.add(1, ordering: .relaxed)
            service.sleep(for: settings.interval)
        }
    }

    static func heartbeat(_ worker: DeliveryWorker, _ session: DatabaseSession) -> BackgroundService {
        let interval = worker.configuration.heartbeat.interval
        let store = WorkerHeartbeatStore()
        let started = Date()
        let host = ProcessInfo.processInfo.hostName
        let version = worker.configuration.version
        // Claimed deliveries at the previous beat, for the rate.
        let previous = Mutex<(claimed: Int, at: ContinuousClock.Instant)?>(nil)
        return BackgroundService(
            .init(name: "herald-heartbeat"), logger: worker.logger,
            onError: { [weak worker] _ in worker?.metrics.add(.databaseErrors) }
        ) { [weak worker] service in
            guard let worker else { return }
            let claimed = PushService.allCases.reduce(0) { $0 + worker.metrics.value("claimed", $1) }
            let now = ContinuousClock.now
            let rate = previous.withLock { last -> Double in
                defer { last = (claimed, now) }
                guard let last else { return 0 }
                let seconds = (now - last.at) / .seconds(1)
                return seconds > 0 ? Double(max(0, claimed - last.claimed)) / seconds : 0
            }
            let beat = WorkerHeartbeat(
                workerID: worker.configuration.workerID, host: host, version: version, release: HeraldVersion.current,
                startedAt: started,
                inFlight: worker.inFlight, pausedUpstreams: worker.pausedUpstreams.keys.sorted(),
                claimsPerSecond: (rate * 100).rounded() / 100, intervalSeconds: interval / .seconds(1))
            try session.use { try store.beat(beat, on: $0) }
            service.sleep(for: interval)
        }
    }
}
