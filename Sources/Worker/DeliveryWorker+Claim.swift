import Foundation
import HeraldCore
import Postgres
import Store

/// Where the claimer's scans have got to; used only by the claimer's thread.
final class ClaimState: @unchecked Sendable {
    /// The latest `availableAt` claimed per (lane, partner) queue (see herald_claim_deliveries).
    var cursors: [QueueCursor: Date] = [:]
    var lastFullScan = Date.distantPast
    /// When the last claim that emptied the queue ended (see minimumClaimSpacing).
    var lastShortClaim = ContinuousClock.now - .seconds(1)
}

extension DeliveryWorker {
    /// One turn of the claim loop: wait for room, claim a batch of the upstreams that are not
    /// paused (and one probe row of each upstream whose pause ended), dispatch it, and when the
    /// queue is empty sleep until work is announced or comes due.
    func claimStep(_ session: DatabaseSession) throws {
        let settings = configuration.claimer
        let state = claimState
        deferUnconfirmedVerdicts()
        let capacity = settings.maxInFlight - inFlight
        let limit = min(settings.batchSize, capacity)
        // Wait for room rather than claiming in dribbles when nearly full.
        if limit <= 0 || (inFlight > 0 && limit < min(settings.batchSize, settings.maxInFlight) / 2) {
            wake.wait(for: [.capacity], until: Date().addingTimeInterval(settings.pollInterval / .seconds(1)))
            return
        }
        // Under live traffic every NOTIFY would start a claim of a handful of rows, and the claims'
        // fixed cost would crowd out the sends: let rows gather for a few ms instead.
        let sinceShort = ContinuousClock.now - state.lastShortClaim
        if sinceShort < settings.minimumClaimSpacing {
            Thread.sleep(forTimeInterval: (settings.minimumClaimSpacing - sinceShort) / .seconds(1))
        }
        let now = Date()
        let dropCursors = hints.withLock { hints -> Bool in
            defer { hints.dropCursors = false }
            return hints.dropCursors
        }
        if dropCursors || now.timeIntervalSince(state.lastFullScan) >= settings.fullScanInterval / .seconds(1) {
            state.cursors.removeAll()
            state.lastFullScan = now
        }

        var open: [PushService] = []
        var probes: [PushService] = []
        for service in upstreams.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            switch pauses.mode(service) {
            case .open: open.append(service)
            case .probe: probes.append(service)
            case .paused: break
            }
        }
        metrics.setPaused(pauses.current.mapValues(\.reason))

        for service in probes {
            // The probe row is claimed without cursors: deferred rows sit behind them.
            let probe = try session.use {
                try store.claim(on: $0, worker: configuration.workerID, limit: 1,
                                leaseSeconds: settings.leaseSeconds, services: [service])
            }
            // Rows the claim says not to send answer nothing: with only such rows there is no probe, and
            // the next real send is the probe.
            pauses.probeClaimed(service, found: probe.contains { Self.outcomeWithoutSending($0) == nil })
            if !probe.isEmpty { dispatch(probe, probe: true) }
        }
        var claimed: [ClaimedDelivery] = []
        // Realtime rows may fill the batch; bulk rows only what the bulk allowance leaves.
        let bulkLimit = min(limit, max(0, settings.maxBulkInFlight - bulkInFlight))
        if !open.isEmpty {
            claimed = try session.use {
                try store.claim(on: $0, worker: configuration.workerID, limit: limit, bulkLimit: bulkLimit,
                                leaseSeconds: settings.leaseSeconds, services: open, cursors: state.cursors)
            }
            metrics.addClaim()
        }
        databaseReachable.store(true, ordering: .relaxed)
        for delivery in claimed {
            let key = QueueCursor(lane: delivery.lane, partnerID: delivery.partnerID)
            if state.cursors[key].map({ delivery.availableAt > $0 }) ?? true { state.cursors[key] = delivery.availableAt }
        }
        if !claimed.isEmpty { dispatch(claimed, probe: false) }
        // A full batch (a group row may take it past the limit): more may be due.
        if claimed.count >= limit { return }
        state.lastShortClaim = ContinuousClock.now
        // The bulk allowance held rows back (more bulk may be due): claim again as soon as sends
        // complete, not only when new work is announced.
        let bulkHeldBack = claimed.count(where: { $0.lane != 0 }) >= bulkLimit

        // The queue is drained: sleep until new work is announced, a scheduled row, a retry or a
        // pause's end comes due, or the poll interval passes.
        var wakeAt = Date().addingTimeInterval(settings.pollInterval / .seconds(1))
        if let scheduled = hints.withLock({ $0.nextScheduled }), scheduled > Date(), scheduled < wakeAt {
            wakeAt = scheduled
        }
        if let pauseEnd = pauses.nextEnd, pauseEnd < wakeAt { wakeAt = max(pauseEnd, Date()) }
        if let verdictEnd = verdicts.nextDeadline, verdictEnd < wakeAt { wakeAt = max(verdictEnd, Date()) }
        if let retry = hold.withLock({ $0.nextRetryAt }), retry < wakeAt {
            wakeAt = max(retry, Date())
            hold.withLock { $0.nextRetryAt = nil }
        }
        wake.wait(for: bulkHeldBack ? [.work, .capacity] : [.work], until: wakeAt)
    }
}
