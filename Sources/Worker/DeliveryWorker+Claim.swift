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
    /// Until when claims may take the rows notifications list instead of walking the due index: the deadline the
    /// last walk that found the queue drained slept until (a scheduled row, a retry, a pause's end, the poll).
    /// Past it, or after a walk that left rows due, the next claim walks.
    var listedUntil = Date.distantPast
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
            // Rows an intake leased to this worker go back at once, for a worker with room.
            let leased = hints.withLock { $0.takeLeased() }
            if !leased.isEmpty { try takeLeased(leased, room: false, open: false, session) }
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
        let (dropCursors, listed, onlyLeased, leased, releaseUnheard) = hints.withLock { hints in
            defer { (hints.dropCursors, hints.releaseUnheard) = (false, false) }
            let onlyLeased = hints.onlyLeased
            return (hints.dropCursors, hints.takeListed(), onlyLeased, hints.takeLeased(), hints.releaseUnheard)
        }
        if dropCursors || now.timeIntervalSince(state.lastFullScan) >= settings.fullScanInterval / .seconds(1) {
            state.cursors.removeAll()
            state.lastFullScan = now
        }

        var open: [PushService] = []
        var probes: [PushService] = []
        for service in upstreams.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            switch pauses.mode(PauseScope(service)) {
            case .open: open.append(service)
            case .probe: probes.append(service)
            case .paused: break
            }
        }
        metrics.setPaused(pauses.current.mapValues(\.reason))

        if releaseUnheard {
            // On the claimer's thread: every row read so far is held, so only rows never heard of go back.
            let keeping = hold.withLock { Array(Set($0.held.values.map(\.leaseID))) } + leased.allIDs
            let released: Int
            do {
                released = try session.use {
                    try store.releaseLeased(on: $0, worker: configuration.workerID, keeping: keeping)
                }
            } catch {
                hints.withLock { $0.releaseUnheard = true }
                throw error
            }
            if released > 0 {
                state.listedUntil = .distantPast
                metrics.add(.releasedUnheard, released)
                logger.info(
                    "gave back rows leased to this worker that it never heard of", [("rows", .number(Double(released)))]
                )
            }
        }
        if !leased.isEmpty {
            try takeLeased(
                leased, room: leased.count <= capacity, open: probes.isEmpty && open.count == upstreams.count,
                session)
            // Only leased rows were announced since a walk found the queue drained: nothing else is due.
            if onlyLeased, !dropCursors, now < state.listedUntil {
                state.lastShortClaim = ContinuousClock.now
                state.listedUntil = min(state.listedUntil, drainedDeadline())
                wake.wait(for: [.work], until: state.listedUntil)
                return
            }
        }

        // Since a walk found the queue drained, only listed rows were announced (an intake's pushes due now): lease
        // them by primary key. Their partners' queues held nothing else due, so there is no share to decide.
        if let listed, !dropCursors, probes.isEmpty, !open.isEmpty, now < state.listedUntil {
            try claimListed(listed, limit: limit, services: open, session)
            return
        }

        for service in probes {
            // The probe row is claimed without cursors: deferred rows sit behind them.
            let probe = try session.use {
                try store.claim(
                    on: $0, worker: configuration.workerID, limit: 1,
                    leaseSeconds: settings.leaseSeconds, services: [service],
                    userMaxPerHour: settings.userMaxPushesPerHour)
            }
            // Rows the claim says not to send answer nothing: with only such rows there is no probe, and
            // the next real send is the probe.
            pauses.probeClaimed(PauseScope(service), found: probe.contains { Self.outcomeWithoutSending($0) == nil })
            if !probe.isEmpty { dispatch(probe, probe: true) }
        }
        var claimed: [ClaimedDelivery] = []
        // Realtime rows may fill the batch; bulk rows only what the bulk allowance leaves.
        let bulkLimit = min(limit, max(0, settings.maxBulkInFlight - bulkInFlight))
        if !open.isEmpty {
            claimed = try session.use {
                try store.claim(
                    on: $0, worker: configuration.workerID, limit: limit, bulkLimit: bulkLimit,
                    leaseSeconds: settings.leaseSeconds, services: open, cursors: state.cursors,
                    userMaxPerHour: settings.userMaxPushesPerHour)
            }
            metrics.addClaim()
        }
        databaseReachable.store(true, ordering: .relaxed)
        for delivery in claimed {
            let key = QueueCursor(lane: delivery.lane, partnerID: delivery.partnerID)
            if state.cursors[key].map({ delivery.availableAt > $0 }) ?? true {
                state.cursors[key] = delivery.availableAt
            }
        }
        if !claimed.isEmpty { dispatch(claimed, probe: false) }
        // A full batch (a group row may take it past the limit): more may be due.
        if claimed.count >= limit {
            state.listedUntil = .distantPast
            return
        }
        // Every due row was claimed: an environment whose pause ended and had none (none became its probe) has
        // nothing queued, and its next send is the probe.
        for service in open { pauses.endProbes(of: service) }
        state.lastShortClaim = ContinuousClock.now
        // The bulk allowance held rows back (more bulk may be due): claim again as soon as sends
        // complete, not only when new work is announced.
        let bulkHeldBack = claimed.count(where: { $0.lane != 0 }) >= bulkLimit

        // The queue is drained: sleep until new work is announced, a scheduled row, a retry or a
        // pause's end comes due, or the poll interval passes.
        let wakeAt = drainedDeadline()
        // Bulk rows held back are for the next walk, as soon as capacity frees.
        state.listedUntil = bulkHeldBack ? .distantPast : wakeAt
        wake.wait(for: bulkHeldBack ? [.work, .capacity] : [.work], until: wakeAt)
    }

    /// Dispatches the rows an intake leased to this worker, as a claim of them would have: those its notification
    /// carried as they are, the others after reading them. With an upstream paused or probing (`open` false), or without
    /// room for them all, releases them instead, for the next walk (this worker's or another's). Carried rows heard
    /// more than half a lease ago are read too: the read sees whether the lease is still this worker's. A row the
    /// read does not return (its lease ended and the rescuer took it) means rows are due that no list names: the
    /// next claim walks.
    func takeLeased(_ leased: Leased, room: Bool, open: Bool, _ session: DatabaseSession) throws {
        let worker = configuration.workerID
        guard room, open, !isDraining else {
            try session.use { try store.release(on: $0, worker: worker, ids: leased.allIDs) }
            claimState.listedUntil = .distantPast
            return
        }
        var rows: [ClaimedDelivery] = []
        var unread = leased.ids
        if ContinuousClock.now - leased.carriedSince < .seconds(configuration.claimer.leaseSeconds) / 2 {
            rows = leased.carried
            metrics.add(.carriedRows, rows.count)
        } else {
            unread += leased.carried.map(\.id)
        }
        if !unread.isEmpty {
            let read = try session.use { try store.readLeased(on: $0, worker: worker, ids: unread) }
            metrics.add(.leasedReads)
            databaseReachable.store(true, ordering: .relaxed)
            if read.count < unread.count { claimState.listedUntil = .distantPast }
            rows += read
        }
        if !rows.isEmpty { dispatch(rows, probe: false) }
    }

    /// Leases the rows a notification listed and sleeps as a drained walk would. A listed row left unleased (another
    /// worker's walk took it, or it is not due yet) may mean rows are due that no list names: the next claim walks.
    private func claimListed(_ listed: [UUID], limit: Int, services: [PushService], _ session: DatabaseSession) throws {
        let settings = configuration.claimer
        let state = claimState
        let claimed = try session.use {
            try store.claim(
                on: $0, worker: configuration.workerID, limit: limit, leaseSeconds: settings.leaseSeconds,
                services: services, listed: listed, userMaxPerHour: settings.userMaxPushesPerHour)
        }
        metrics.addClaim(listed: true)
        databaseReachable.store(true, ordering: .relaxed)
        if !claimed.isEmpty { dispatch(claimed, probe: false) }
        state.lastShortClaim = ContinuousClock.now
        if Set(claimed.map(\.leaseID)).count < listed.count {
            state.listedUntil = .distantPast
            return
        }
        state.listedUntil = min(state.listedUntil, drainedDeadline())
        wake.wait(for: [.work], until: state.listedUntil)
    }

    /// When a claimer that found the queue drained wakes without being told of work: a scheduled row, a retry or a
    /// pause's end coming due, or the poll interval.
    private func drainedDeadline() -> Date {
        let settings = configuration.claimer
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
        return wakeAt
    }
}
