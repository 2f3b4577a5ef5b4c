import Synchronization

/// The OAuth2 access tokens the token endpoint issued, with their expiry (UNIX seconds) and whether their
/// scopes let them send FCM messages.
final class AccessTokenStore: Sendable {
    /// Expired tokens are swept when the table reaches this size, so a long benchmark that
    /// fetches many tokens cannot grow it without bound.
    static let sweepThreshold = 10_000

    /// What FCM needs to know of a token it is shown.
    enum Grant: Equatable {
        /// Not issued here, or expired: 401.
        case invalid
        /// Valid, but its scopes do not cover `messages:send`: 403.
        case insufficientScope
        case mayMessage
    }

    private struct Entry {
        var expiresAt: Double
        var mayMessage: Bool
    }

    private let tokens = Mutex<[String: Entry]>([:])

    func insert(_ token: String, expiresAt: Double, mayMessage: Bool = true, now: Double) {
        tokens.withLock { table in
            if table.count >= Self.sweepThreshold { table = table.filter { $0.value.expiresAt > now } }
            table[token] = Entry(expiresAt: expiresAt, mayMessage: mayMessage)
        }
    }

    /// What `token` may do at `now`.
    func grant(_ token: Substring, now: Double) -> Grant {
        let key = String(token)
        return tokens.withLock { table in
            guard let entry = table[key], entry.expiresAt > now else { return .invalid }
            return entry.mayMessage ? .mayMessage : .insufficientScope
        }
    }

    func removeAll() {
        tokens.withLock { $0.removeAll() }
    }
}
