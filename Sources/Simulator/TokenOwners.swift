import Synchronization

/// Which app (bundle id) each APNs device token belongs to, for 400 DeviceTokenNotForTopic.
///
/// On a real phone a token is issued to one app, so APNs refuses it under another app's topic. The simulator
/// learns the owner two ways: a test or sandbox user binds it (`PUT /sim/tokens/{token}` with
/// `{"bundleId":...}`), or, when the team's topics are configured (`--apns-topics`), the first request for the
/// token that passes every check binds it to that request's bundle. A later request for the token under another
/// bundle is refused. Tokens compare case-insensitively (they are hex).
///
/// Learned owners are bounded: past `maxLearned` tokens they are all forgotten (the bound protects a long
/// benchmark with random tokens; forgetting only makes the simulator lenient again). Bound ones are kept.
final class TokenOwners: Sendable {
    static let maxLearned = 100_000

    enum Source: String, Sendable {
        /// Set through the control API.
        case bound
        /// The token's first accepted request.
        case firstRequest = "first-request"
    }

    private struct State {
        var bound: [String: String] = [:]
        var learned: [String: String] = [:]
    }

    /// The first accepted request binds a token that has no owner yet.
    let learns: Bool
    private let state = Mutex(State())
    /// Whether any check can refuse: learning, or at least one bound token (one relaxed load on the hot path).
    private let active: Atomic<Bool>

    init(learns: Bool) {
        self.learns = learns
        active = Atomic(learns)
    }

    /// Binds `token` to `bundleID`, replacing whatever it had.
    func bind(token: String, bundleID: String) {
        let key = token.lowercased()
        state.withLock { state in
            state.bound[key] = bundleID
            state.learned.removeValue(forKey: key)
        }
        active.store(true, ordering: .relaxed)
    }

    /// Forgets one token's owner, bound or learned; true if it had one.
    @discardableResult
    func remove(token: String) -> Bool {
        let key = token.lowercased()
        return state.withLock { state in
            let removed = state.bound.removeValue(forKey: key) != nil || state.learned.removeValue(forKey: key) != nil
            active.store(learns || !state.bound.isEmpty, ordering: .relaxed)
            return removed
        }
    }

    /// Forgets every owner; returns how many there were.
    @discardableResult
    func removeAll() -> Int {
        state.withLock { state in
            let count = state.bound.count + state.learned.count
            state = State()
            active.store(learns, ordering: .relaxed)
            return count
        }
    }

    /// Every known owner, by token (lowercase), sorted.
    func all() -> [(token: String, bundleID: String, source: Source)] {
        state.withLock { state in
            state.bound.map { ($0.key, $0.value, Source.bound) }
                + state.learned.map { ($0.key, $0.value, Source.firstRequest) }
        }.sorted { $0.token < $1.token }
    }

    /// True when nothing is bound and nothing is learned: the check cannot refuse.
    var isInactive: Bool { !active.load(ordering: .relaxed) }

    /// Whether a request for `token` under `bundleID` may go; learns the owner of a new token when learning.
    /// Call it only for requests that passed every other check.
    func admit(token: Substring, bundleID: Substring) -> Bool {
        guard !isInactive else { return true }
        let key = token.lowercased()
        return state.withLock { state in
            if let owner = state.bound[key] ?? state.learned[key] { return owner == bundleID }
            if learns {
                if state.learned.count >= Self.maxLearned { state.learned.removeAll(keepingCapacity: true) }
                state.learned[key] = String(bundleID)
            }
            return true
        }
    }
}
