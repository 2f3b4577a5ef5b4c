import Foundation
import HeraldCore
import Synchronization

/// Which upstreams are paused because they refused Herald's own credentials or configuration
/// (a revoked key, a wrong topic), and when each may be tried again.
///
/// A pause stops a whole upstream, or one APNs environment when the fault is that environment's alone (its key is
/// scoped to the other environment: `APNsResponseClassifier.environmentReasons`). The claim loop skips an upstream
/// paused whole; the rows of a paused environment are claimed with the rest and deferred unsent (`admit`).
///
/// - The first setup fault pauses the upstream for `backoff.step(afterFailures: 1)`; faults from
///   sends that were already in flight do not lengthen it.
/// - When the pause ends the upstream is *probing*: the claim loop leases a single row of it (a group
///   row's members: the first one sent is the probe, DeliveryWorker.dispatch). The probe's answer decides: accepted (any answer but a setup fault) resumes the upstream; another
///   setup fault pauses it again, twice as long, up to the maximum.
/// - Paused rows are deferred to the pause's end with their attempt unspent; nothing is failed.
final class UpstreamPauses: Sendable {
    struct Pause: Sendable, Equatable {
        var reason: String
        var since: Date
        var until: Date
        /// Consecutive pauses (1 = first), for the backoff.
        var faults: Int
        /// A probe row is out: claim no other until its answer.
        var probeInFlight: Bool
    }

    enum Mode: Equatable {
        /// Claim normally.
        case open
        /// Claim nothing.
        case paused
        /// Claim one row to test the upstream.
        case probe
    }

    /// What a row of one environment may do now (`admit`).
    enum Admission: Equatable {
        case send
        /// Send it: its answer decides the environment's pause.
        case probe
        /// Defer it, unsent, to this time; `reason` is the pause's.
        case wait(until: Date, reason: String)
    }

    private let backoff: ExponentialBackoff
    private let clock: any HeraldClock
    private let pauses = Mutex<[PauseScope: Pause]>([:])

    init(backoff: ExponentialBackoff, clock: any HeraldClock) {
        self.backoff = backoff
        self.clock = clock
    }

    /// A send to `service` came back as a setup fault. Returns when the row may be tried again. `failures`
    /// lengthens a new pause as if that many had come before it (storms of token verdicts, TokenVerdicts).
    func fault(_ service: PauseScope, reason: String, wasProbe: Bool, failures: Int = 1) -> Date {
        let now = clock.now
        return pauses.withLock { pauses in
            if var pause = pauses[service] {
                // An in-flight send of a pause already decided: the pause stands as it is.
                guard wasProbe || (!pause.probeInFlight && pause.until <= now) else { return max(pause.until, now) }
                pause.faults += 1
                pause.reason = reason
                pause.until = now.addingTimeInterval(backoff.step(afterFailures: pause.faults) / .seconds(1))
                pause.probeInFlight = false
                pauses[service] = pause
                return pause.until
            }
            let faults = max(failures, 1)
            let until = now.addingTimeInterval(backoff.step(afterFailures: faults) / .seconds(1))
            pauses[service] = Pause(reason: reason, since: now, until: until, faults: faults, probeInFlight: false)
            return until
        }
    }

    /// A probe of `scope` decided nothing about it (it was answered with another scope's setup fault, or another
    /// pause kept it unsent): the scope waits one more step, as after its own fault, rather than for a probe that
    /// is not out.
    func probeUndecided(_ scope: PauseScope) {
        guard let pause = current[scope], pause.probeInFlight else { return }
        _ = fault(scope, reason: pause.reason, wasProbe: true)
    }

    /// A probe's answer was not a setup fault: the upstream works again. Returns true when this
    /// ended a pause.
    @discardableResult
    func accepted(_ service: PauseScope) -> Bool {
        pauses.withLock { $0.removeValue(forKey: service) != nil }
    }

    /// What the claim loop may take of `service` now.
    func mode(_ service: PauseScope) -> Mode {
        let now = clock.now
        return pauses.withLock { pauses in
            guard let pause = pauses[service] else { return .open }
            if pause.until > now || pause.probeInFlight { return .paused }
            return .probe
        }
    }

    /// The claim loop leased a probe row (true) or found none to probe with (false: nothing is
    /// queued for the upstream, so the next real send is the probe).
    func probeClaimed(_ service: PauseScope, found: Bool) {
        pauses.withLock { pauses in
            guard var pause = pauses[service] else { return }
            if found {
                pause.probeInFlight = true
                pauses[service] = pause
            } else {
                pauses[service] = nil
            }
        }
    }

    /// What a claimed row of an environment scope may do now: sent when nothing pauses it; the probe when its
    /// pause ended and no probe is out (from here on one is); deferred to the pause's end otherwise, or by one
    /// first pause step while a probe is out (its answer decides when the rest go).
    func admit(_ scope: PauseScope) -> Admission {
        let now = clock.now
        return pauses.withLock { pauses in
            guard var pause = pauses[scope] else { return .send }
            if pause.until > now { return .wait(until: pause.until, reason: pause.reason) }
            if pause.probeInFlight {
                let step = backoff.step(afterFailures: 1) / .seconds(1)
                return .wait(until: now.addingTimeInterval(step), reason: pause.reason)
            }
            pause.probeInFlight = true
            pauses[scope] = pause
            return .probe
        }
    }

    /// The environment pauses of `service` a probe claim found no row for: nothing of theirs is queued, so the
    /// next real send of each is its probe.
    func endProbes(of service: PushService) {
        pauses.withLock { pauses in
            for (scope, pause) in pauses where scope.service == service && scope.environment != nil {
                if !pause.probeInFlight && pause.until <= clock.now { pauses[scope] = nil }
            }
        }
    }

    /// The paused upstreams, for `/readyz` and the metrics.
    var current: [PauseScope: Pause] { pauses.withLock { $0 } }

    /// The earliest end of a pause (the claim loop wakes for it).
    var nextEnd: Date? { pauses.withLock { $0.values.filter { !$0.probeInFlight }.map(\.until).min() } }
}

/// What one pause stops: a whole upstream (`environment` nil), or one APNs environment of it.
struct PauseScope: Hashable, Sendable {
    let service: PushService
    let environment: String?

    init(_ service: PushService, environment: String? = nil) {
        self.service = service
        self.environment = environment
    }

    /// `apns`, `fcm`, or `apns-sandbox`: the upstream's name in `/readyz`, the heartbeat and the metrics.
    var name: String { environment.map { "\(service.rawValue)-\($0)" } ?? service.rawValue }
}
