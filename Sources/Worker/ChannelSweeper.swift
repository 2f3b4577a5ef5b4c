import APNs
import Foundation
import HeraldCore
import ServiceSupport
import Store
import Synchronization

/// Finds the broadcast channels APNs holds for the app and Herald has no record of, and deletes them, so none
/// counts against Apple's 10,000 channels per app unseen. Such a channel is left when a create reached APNs but
/// its answer did not reach Herald (a timeout, a connection lost after Apple made it): the row is retried and
/// creates another, and Apple's ids are its own (a create cannot name one), so the orphan cannot be adopted.
///
/// A sweep lists the app's channels in the environment (`GET /1/apps/{bundleId}/all-channels`), asks Postgres
/// which ids no opening, open or ending channel carries (`ChannelSyncStore.unmanaged`), and deletes those a
/// sweep at least `confirmation` earlier found unknown too, at most `maxDeletes` per sweep. The second sighting
/// is what keeps a create in flight safe: its answer is recorded, or its lease ends, well within `confirmation`.
/// Sweeps run every `interval`; sooner while unknown channels wait for their second sighting or for room in a
/// sweep, and at once when a create's outcome is unknown (`createOutcomeUnknown`). Each sweep is logged and counted
/// (`herald_worker_channel_sweeps_total`, `..._orphans_deleted_total`, `herald_worker_channels_at_apns`).
final class ChannelSweeper: Sendable {
    private struct State {
        /// Ids found unknown, and when first.
        var unknownSince: [String: Date] = [:]
        var nextSweep = Date.distantPast
    }

    private let configuration: ChannelSweepConfiguration
    private let channels: APNsChannels
    private let store: ChannelSyncStore
    private let metrics: WorkerMetrics
    private let logger: Logger
    private let clock: any HeraldClock
    private let state = Mutex(State())
    private let service = Mutex<BackgroundService?>(nil)

    init(
        configuration: ChannelSweepConfiguration, channels: APNsChannels, store: ChannelSyncStore,
        metrics: WorkerMetrics, logger: Logger, clock: any HeraldClock
    ) {
        self.configuration = configuration
        self.channels = channels
        self.store = store
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        let service = BackgroundService(
            .init(name: "herald-channel-sweep", backoff: .init(base: .seconds(1), maximum: .seconds(60))),
            logger: logger
        ) { [unowned self] service in try step(service) }
        self.service.withLock { $0 = service }
    }

    func start() { service.withLock { $0 }?.start() }

    func stop(deadline: Date) { _ = service.withLock { $0 }?.stop(deadline: deadline) }

    /// A create got no answer that says whether APNs made the channel: sweep now, so an orphan is found (and
    /// deleted at the sweep after `confirmation`) without waiting for the interval.
    func createOutcomeUnknown() {
        state.withLock { $0.nextSweep = .distantPast }
        service.withLock { $0 }?.wake()
    }

    private func step(_ service: BackgroundService) throws {
        let now = clock.now
        let due = state.withLock { $0.nextSweep }
        if now >= due {
            let next = try sweep(now: now)
            state.withLock { $0.nextSweep = next }
        }
        let wait = state.withLock { $0.nextSweep }.timeIntervalSince(clock.now)
        // Woken early by `createOutcomeUnknown`; a stopped or moved clock is looked at again within a second.
        _ = service.sleep(for: .milliseconds(Int64(min(max(wait, 0.001), 1) * 1000)))
    }

    /// One sweep; returns when the next is due.
    private func sweep(now: Date) throws -> Date {
        let listing = wait(channels.list)
        guard case .listed(let listed) = listing else {
            metrics.recordChannelSweep(listed: nil, unknown: 0, deleted: 0)
            logger.warning("channel sweep: APNs did not list the app's channels", [("result", .string("\(listing)"))])
            return now.addingTimeInterval(min(configuration.interval, configuration.confirmation) / .seconds(1))
        }
        let unknown = try store.unmanaged(listed)
        let confirmation = configuration.confirmation / .seconds(1)
        let confirmed = state.withLock { state -> [String] in
            // Forget what is no longer unknown (its create was recorded, or it is gone), note the new ones.
            let still = Set(unknown)
            state.unknownSince = state.unknownSince.filter { still.contains($0.key) }
            var confirmed: [String] = []
            for id in unknown {
                if let since = state.unknownSince[id] {
                    if now.timeIntervalSince(since) >= confirmation { confirmed.append(id) }
                } else {
                    state.unknownSince[id] = now
                }
            }
            return confirmed
        }
        var deleted = 0
        for id in confirmed.prefix(configuration.maxDeletes) {
            switch wait({ channels.delete(channelID: id, completion: $0) }) {
            case .done, .unknownChannel:
                deleted += 1
                state.withLock { _ = $0.unknownSince.removeValue(forKey: id) }
            case let other:
                logger.warning(
                    "channel sweep: an unknown channel could not be deleted", [("result", .string("\(other)"))])
            }
        }
        metrics.recordChannelSweep(listed: listed.count, unknown: unknown.count, deleted: deleted)
        let waiting = state.withLock { $0.unknownSince.count }
        logger.info(
            "channel sweep",
            [
                ("environment", .string(channels.environment.rawValue)), ("listed", .number(Double(listed.count))),
                ("unknown", .number(Double(unknown.count))), ("deleted", .number(Double(deleted))),
                ("waiting", .number(Double(waiting))),
            ])
        // Unknown channels wait for their second sighting (or for room in a sweep): come back for them then.
        let next = waiting > 0 ? min(configuration.interval, configuration.confirmation) : configuration.interval
        return now.addingTimeInterval(next / .seconds(1))
    }

    /// Waits for one channel call's answer: the client's request timeout bounds it.
    private func wait(_ call: (@escaping @Sendable (APNsChannelResult) -> Void) -> Void) -> APNsChannelResult {
        let answer = Mutex<APNsChannelResult?>(nil)
        let done = DispatchSemaphore(value: 0)
        call { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }!
    }
}
