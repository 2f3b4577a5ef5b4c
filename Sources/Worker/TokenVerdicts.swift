import Foundation
import HeraldCore
import Store
import Synchronization

/// Suspect token verdicts ("Tokens stay true"): APNs BadDeviceToken and DeviceTokenNotForTopic, FCM
/// INVALID_ARGUMENT about the token. Each says as much about Herald's setup (the wrong APNs environment or
/// topic, the wrong Firebase project) as about the token, so none retires a token on its own word.
///
/// - A suspect delivery is held (its lease kept, nothing recorded) until the same upstream (service and
///   environment: APNs' production and sandbox hosts are two) accepts another token: then the verdict stands
///   and the token is retired (`tokenInvalid`, since the verdict's time). Not so a verdict that came after a storm
///   with no success since (a paused upstream's probe, a send the pause did not stop): the setup was wrong then,
///   and a success may only say it was fixed since, so its wait ends and it is tried again (`recheck`).
/// - No such success within `wait`: the row is deferred, its attempt unspent, for `recheck` (doubling for each
///   unconfirmed verdict of the same delivery this worker saw, at most `maximumRecheck`).
/// - `stormTokens` distinct tokens refused within `stormWindow` with no success in between is a storm: a setup
///   fault. The caller pauses the service (UpstreamPauses) and defers everything held for it to the pause's end.
///   Storms with no success between them lengthen the pause (`storms`).
/// A 410 (the app is gone) is not suspect and never passes through here.
final class TokenVerdicts: Sendable {
    struct Upstream: Hashable, Sendable {
        let service: PushService
        let environment: String
    }

    struct Suspect: Sendable {
        let delivery: ClaimedDelivery
        let reason: String
        /// When the verdict came: the token's invalidation time if it stands.
        let at: Date
        let deadline: Date
        /// It came after a storm of its upstream with no success since: a success does not confirm it.
        let afterStorm: Bool
    }

    enum Decision {
        /// Held: wait for a success of the upstream.
        case held
        /// A storm: pause `service` with `reason` (the `storms`-th in a row); `released` (this delivery
        /// among them) are to be deferred to the pause's end.
        case storm(reason: String, storms: Int, released: [Suspect])
    }

    private struct UpstreamState {
        var held: [Suspect] = []
        /// Verdicts since the upstream's last success: when, and which token.
        var recent: [(at: Date, token: String)] = []
        /// Storms since the last success.
        var storms = 0
    }

    private struct State {
        var upstreams: [Upstream: UpstreamState] = [:]
        /// Unconfirmed verdicts per delivery, for the recheck's backoff. Bounded: past `maxRemembered` entries it
        /// starts again from nothing (a delivery then waits the shortest recheck once more).
        var unconfirmed: [UUID: Int] = [:]
    }

    static let maxRemembered = 10_000

    let configuration: TokenVerdictConfiguration
    private let state = Mutex(State())
    /// Whether any upstream has verdicts on record: every sent delivery asks `accepted` and every claim step
    /// `expired` and `nextDeadline`, and nearly always there is nothing (one relaxed load instead of a lock).
    private let tracking = Atomic<Bool>(false)

    init(configuration: TokenVerdictConfiguration) {
        self.configuration = configuration
    }

    static func upstream(of delivery: ClaimedDelivery) -> Upstream {
        Upstream(service: delivery.service, environment: delivery.environment)
    }

    /// A suspect verdict for `delivery`'s token at `now`.
    func suspect(_ delivery: ClaimedDelivery, reason: String, now: Date) -> Decision {
        let key = Self.upstream(of: delivery)
        return state.withLock { state in
            var upstream = state.upstreams[key, default: UpstreamState()]
            let suspect = Suspect(
                delivery: delivery, reason: reason, at: now,
                deadline: now.addingTimeInterval(configuration.wait / .seconds(1)),
                afterStorm: upstream.storms > 0)
            tracking.store(true, ordering: .relaxed)
            let windowStart = now.addingTimeInterval(-(configuration.stormWindow / .seconds(1)))
            upstream.recent.removeAll { $0.at < windowStart }
            upstream.recent.append((now, delivery.token ?? ""))
            upstream.held.append(suspect)
            let distinct = Set(upstream.recent.map(\.token)).count
            guard distinct >= configuration.stormTokens else {
                state.upstreams[key] = upstream
                return .held
            }
            upstream.recent.removeAll()
            upstream.storms += 1
            let storms = upstream.storms
            state.upstreams[key] = upstream
            // The whole service pauses: release what it holds under every environment.
            let released = Self.takeHeld(&state, where: { $0.service == delivery.service })
            return .storm(reason: "token_storm_\(reason)", storms: storms, released: released)
        }
    }

    /// `delivery` was accepted: its upstream works. Returns the held verdicts about other tokens of that upstream,
    /// which now stand; those that came after a storm stay held with their wait ended (`expired` gives them back).
    func accepted(_ delivery: ClaimedDelivery) -> [Suspect] {
        guard tracking.load(ordering: .relaxed) else { return [] }
        let key = Self.upstream(of: delivery)
        return state.withLock { state in
            guard var upstream = state.upstreams[key] else { return [] }
            let token = delivery.token
            let standing = upstream.held.filter { $0.delivery.token != token && !$0.afterStorm }
            upstream.held = upstream.held.compactMap { held in
                if held.delivery.token == token { return held }
                guard held.afterStorm else { return nil }
                return Suspect(
                    delivery: held.delivery, reason: held.reason, at: held.at, deadline: .distantPast,
                    afterStorm: true)
            }
            upstream.recent.removeAll()
            upstream.storms = 0
            for suspect in standing { state.unconfirmed.removeValue(forKey: suspect.delivery.id) }
            if upstream.held.isEmpty {
                state.upstreams.removeValue(forKey: key)
                if state.upstreams.isEmpty { tracking.store(false, ordering: .relaxed) }
            } else {
                state.upstreams[key] = upstream
            }
            return standing
        }
    }

    /// Held verdicts whose wait ended by `now`.
    func expired(now: Date) -> [Suspect] {
        guard tracking.load(ordering: .relaxed) else { return [] }
        return state.withLock { state in Self.takeHeld(&state, where: { _ in true }, dueBy: now) }
    }

    /// Everything held for `service` (it was paused meanwhile), or for every service (the worker drains).
    func releaseAll(_ service: PushService? = nil) -> [Suspect] {
        state.withLock { state in Self.takeHeld(&state, where: { service == nil || $0.service == service }) }
    }

    /// When the earliest held verdict's wait ends.
    var nextDeadline: Date? {
        guard tracking.load(ordering: .relaxed) else { return nil }
        return state.withLock { $0.upstreams.values.flatMap(\.held).map(\.deadline).min() }
    }

    /// Deliveries held now.
    var heldCount: Int { state.withLock { $0.upstreams.values.reduce(0) { $0 + $1.held.count } } }

    /// When an unconfirmed `suspect` is tried again: `recheck`, doubled for each earlier unconfirmed verdict of
    /// the same delivery, at most `maximumRecheck`.
    func recheckAt(_ suspect: Suspect, now: Date) -> Date {
        let count = state.withLock { state -> Int in
            if state.unconfirmed.count >= Self.maxRemembered { state.unconfirmed.removeAll() }
            state.unconfirmed[suspect.delivery.id, default: 0] += 1
            return state.unconfirmed[suspect.delivery.id]!
        }
        let delay = ExponentialBackoff(base: configuration.recheck, maximum: configuration.maximumRecheck)
            .step(afterFailures: count)
        return now.addingTimeInterval(delay / .seconds(1))
    }

    private static func takeHeld(
        _ state: inout State, where matches: (Upstream) -> Bool,
        dueBy: Date? = nil
    ) -> [Suspect] {
        var taken: [Suspect] = []
        for (key, var upstream) in state.upstreams where matches(key) {
            let before = upstream.held.count
            if let dueBy {
                taken += upstream.held.filter { $0.deadline <= dueBy }
                upstream.held.removeAll { $0.deadline <= dueBy }
            } else {
                taken += upstream.held
                upstream.held.removeAll()
            }
            if upstream.held.count != before { state.upstreams[key] = upstream }
        }
        return taken
    }
}
