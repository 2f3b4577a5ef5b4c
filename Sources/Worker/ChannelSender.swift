import APNs
import Foundation
import HTTP2
import HeraldCore
import Postgres
import ServiceSupport
import Store
import Synchronization

/// Makes APNs agree with the broadcast channels in Postgres (sql/034_live_channels.sql): a background service
/// leases channels with work due, does what each needs (`ChannelAction`: create the APNs channel, broadcast the
/// newest change, delete the channel after its end) and records each answer. One call per channel at a time
/// (the lease), so broadcasts leave in the order of their changes; a change made while one is in flight is sent
/// next, the ones between coalesced.
///
/// 2xx moves the channel on; 429, 5xx, timeouts, connection loss and setup faults (APNs refusing Herald's
/// credentials or bundle) retry with backoff and jitter; a channel APNs does not know (ChannelNotRegistered)
/// or cannot make is `failed`; any other refusal of a broadcast fails that change only. A worker that dies
/// mid-call leaves its channels to another after the lease. A create that got no answer may have made a channel
/// Herald will never hear of: the `ChannelSweeper` finds and deletes it.
final class ChannelSender: Sendable {
    private let configuration: ChannelSenderConfiguration
    private let channels: APNsChannels
    private let store: ChannelSyncStore
    private let loop: SenderLoop<(UUID, ChannelCallOutcome)>
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let clock: any HeraldClock
    /// Deletes the channels APNs has and Herald does not (nil when HERALD_CHANNEL_SWEEP_ENABLED=0).
    private let sweeper: ChannelSweeper?
    /// Calls in flight: counted until their answer is queued for the next flush.
    private let inFlight = Mutex(0)

    init(
        configuration: ChannelSenderConfiguration, channels: APNsChannels, databaseURL: String,
        connectionOptions: PostgresConnectionOptions, metrics: WorkerMetrics, logger: Logger, clock: any HeraldClock
    ) {
        self.configuration = configuration
        self.channels = channels
        loop = SenderLoop(
            name: "herald-channels", databaseURL: databaseURL, connectionOptions: connectionOptions, logger: logger)
        store = ChannelSyncStore(pool: loop.pool)
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        sweeper =
            configuration.sweep.enabled
            ? ChannelSweeper(
                configuration: configuration.sweep, channels: channels, store: store, metrics: metrics, logger: logger,
                clock: clock) : nil
        loop.run { [unowned self] service in try step(service) }
    }

    func start() {
        loop.start()
        sweeper?.start()
    }

    /// Looks for due channels now (a partner's change was notified) instead of at the next poll.
    func wake() { loop.wake() }

    /// Stops claiming, waits (until `deadline`) for the answers in flight and records them. Channels still
    /// unanswered stay leased and are taken again after the lease.
    func drain(deadline: Date) {
        loop.drain(
            deadline: deadline, inFlight: { inFlight.withLock { $0 } }, flush: flush,
            unrecorded: "channels: answers not recorded at the drain; their channels are taken again after the lease")
        sweeper?.stop(deadline: deadline)
        channels.shutdown()
        loop.pool.close()
    }

    private func step(_ service: BackgroundService) throws {
        try flush()
        let free = configuration.maxInFlight - inFlight.withLock { $0 }
        if free > 0 && !loop.isDraining {
            let now = clock.now
            let leased = try store.claim(limit: free, leaseSeconds: configuration.leaseSeconds, now: now)
            for channel in leased { perform(ChannelAction.next(for: channel, now: now), on: channel, service: service) }
            if leased.count == free {
                // More may be due: claim again as soon as there is room.
                try flush()
                return
            }
        }
        try flush()
        service.sleep(for: configuration.pollInterval)
    }

    private func perform(_ action: ChannelAction, on channel: LeasedChannel, service: BackgroundService) {
        let started = ContinuousClock.now
        let call = { [self] in inFlight.withLock { $0 += 1 } }
        let answered = { @Sendable [self] (kind: String, outcome: ChannelCallOutcome) in
            metrics.recordChannelCall(
                kind, outcome: Self.label(outcome),
                seconds: (ContinuousClock.now - started) / .seconds(1))
            loop.finish((channel.id, outcome))
            inFlight.withLock { $0 -= 1 }
            service.wake()
        }
        switch action {
        case .release, .close:
            loop.finish((channel.id, action == .close ? .closed : .release))
        case .create:
            call()
            channels.create(storesLatest: true) { [self] result in
                // No answer from APNs (a timeout, a connection lost): it may have made the channel all the same.
                if case .retry(let reason, _) = result, HTTP2ErrorCode(rawValue: reason) != nil {
                    sweeper?.createOutcomeUnknown()
                }
                answered(
                    "create",
                    outcome(of: result, channel) { id in
                        guard let id, !id.isEmpty else {
                            return .retry(reason: "no_channel_id", at: retryAt(channel, nil))
                        }
                        return .created(apnsChannelID: id, environment: channels.environment.rawValue)
                    })
            }
        case .broadcast(let id, let version, let payload, let priority, let expiration):
            call()
            channels.broadcast(
                channelID: id, payload: Array(payload.utf8), priority: priority,
                expiration: expiration
            ) { [self] result in
                answered(
                    "broadcast", outcome(of: result, channel, version: version) { _ in .broadcast(version: version) })
            }
        case .delete(let id):
            call()
            channels.delete(channelID: id) { [self] result in
                // A channel APNs no longer knows is as deleted as can be.
                if case .unknownChannel = result { return answered("delete", .deleted) }
                answered("delete", outcome(of: result, channel) { _ in .deleted })
            }
        }
    }

    /// What to record of an answer: `done` for 2xx (given the created channel's id, if any).
    private func outcome(
        of result: APNsChannelResult, _ channel: LeasedChannel, version: Int? = nil,
        done: (String?) -> ChannelCallOutcome
    ) -> ChannelCallOutcome {
        switch (result, version) {
        case (.done(let id), _):
            return done(id)
        case (.listed, _):
            return done(nil)
        case (.refused(let reason), let version?):
            return .refused(version: version, reason: reason)
        // Refused outside a broadcast (whose version records the refusal), or unknown to APNs: the channel is gone.
        case (.unknownChannel(let reason), _), (.refused(let reason), nil):
            logger.warning(
                "broadcast channel refused by APNs",
                [
                    ("channel", .string(channel.id.uuidString.lowercased())), ("reason", .string(reason)),
                ])
            return .gone(reason: reason)
        case (.retry(let reason, let after), _):
            return .retry(reason: reason, at: retryAt(channel, after))
        case (.setupFault(let reason), _):
            logger.warning(
                "APNs refused Herald's setup for a broadcast channel; retrying", [("reason", .string(reason))])
            return .retry(reason: reason, at: retryAt(channel, nil))
        }
    }

    private func retryAt(_ channel: LeasedChannel, _ retryAfter: Duration?) -> Date {
        let backoff = configuration.retry.delay(afterFailures: channel.attempts, random: Double.random(in: 0..<1))
        let delay = max(backoff, retryAfter ?? .zero)
        return clock.now.addingTimeInterval(delay / .seconds(1))
    }

    /// Records the answers gathered so far; on failure they stay queued for the next try.
    private func flush() throws {
        let now = clock.now
        try loop.flush { records in
            while let (id, outcome) = records.first {
                try store.record(outcome, channelID: id, now: now)
                records.removeFirst()
            }
        }
    }

    static func label(_ outcome: ChannelCallOutcome) -> String {
        switch outcome {
        case .created, .broadcast, .deleted, .closed, .release: return "done"
        case .refused: return "refused"
        case .gone: return "gone"
        case .retry: return "retry"
        }
    }
}
