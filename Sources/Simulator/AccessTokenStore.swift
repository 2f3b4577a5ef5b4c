import Synchronization

/// The OAuth2 access tokens the token endpoint issued, with their expiry (UNIX seconds), whether their scopes let
/// them send FCM messages, and the project of the service account they were issued to.
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
        /// Valid, but issued to a service account of another project than the one named: 403.
        case otherProject
        case mayMessage
    }

    private struct Entry {
        var expiresAt: Double
        var mayMessage: Bool
        /// The service account's project; nil (no credentials file) for any project.
        var project: String?
    }

    private let tokens = Mutex<[String: Entry]>([:])

    func insert(_ token: String, expiresAt: Double, mayMessage: Bool = true, project: String? = nil, now: Double) {
        tokens.withLock { table in
            if table.count >= Self.sweepThreshold { table = table.filter { $0.value.expiresAt > now } }
            table[token] = Entry(expiresAt: expiresAt, mayMessage: mayMessage, project: project)
        }
    }

    /// What `token` may do at `now` in `project`'s `messages:send` (compared under the lock: nothing is copied
    /// out on the hot path).
    func grant(_ token: Substring, project: Substring, now: Double) -> Grant {
        let key = String(token)
        return tokens.withLock { table in
            guard let entry = table[key], entry.expiresAt > now else { return .invalid }
            guard entry.mayMessage else { return .insufficientScope }
            if let owner = entry.project, owner != project { return .otherProject }
            return .mayMessage
        }
    }

    func removeAll() {
        tokens.withLock { $0.removeAll() }
    }
}
