import Synchronization

/// The OAuth2 access tokens the token endpoint issued, with their expiry (UNIX seconds).
final class AccessTokenStore: Sendable {
    /// Expired tokens are swept when the table reaches this size, so a long benchmark that
    /// fetches many tokens cannot grow it without bound.
    static let sweepThreshold = 10_000

    private let tokens = Mutex<[String: Double]>([:])

    func insert(_ token: String, expiresAt: Double, now: Double) {
        tokens.withLock { table in
            if table.count >= Self.sweepThreshold { table = table.filter { $0.value > now } }
            table[token] = expiresAt
        }
    }

    /// True when `token` was issued here and has not expired at `now`.
    func isValid(_ token: Substring, now: Double) -> Bool {
        let key = String(token)
        return tokens.withLock { table in (table[key] ?? 0) > now }
    }

    func removeAll() {
        tokens.withLock { $0.removeAll() }
    }
}
