import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store
import Synchronization

/// Checks bearer tokens. Admin and host tokens are compared in constant time; partner keys are
/// looked up by their SHA-256 and cached briefly, so a revoked or rotated key is refused on every
/// intake process within `cacheSeconds`. Each role may have a previous token (and a partner the key before its
/// last rotation) accepted during a rollout; every request made with one is counted
/// (`herald_intake_previous_credential_requests_total`), so an operator sees when callers have moved.
final class Authenticator: Sendable {
    private struct CacheEntry {
        let partner: PartnerProfile?
        let previous: Bool
        let suspended: Bool
        let fetched: ContinuousClock.Instant
    }

    /// A role's token and, during a rotation, the one before it.
    struct Tokens: Sendable {
        let current: [UInt8]
        let previous: [UInt8]?
        init(_ current: String, previous: String?) {
            self.current = Array(current.utf8)
            self.previous = previous.map { Array($0.utf8) }
        }

        /// Nil when `token` is neither; else whether it is the previous one. Both comparisons always run.
        func match(_ token: String) -> Bool? {
            let bytes = Array(token.utf8)
            let isCurrent = Digest.constantTimeEquals(bytes, current)
            let isPrevious = previous.map { Digest.constantTimeEquals(bytes, $0) } ?? false
            return isCurrent ? false : isPrevious ? true : nil
        }
    }

    private let adminTokens: Tokens
    private let hostTokens: Tokens
    private let partners: PartnerStore
    private let metrics: IntakeMetrics
    private let cacheTTL: Duration
    private let cache = Mutex<[String: CacheEntry]>([:])
    private static let maxCacheEntries = 10_000

    init(admin: Tokens, host: Tokens, partners: PartnerStore, metrics: IntakeMetrics, cacheSeconds: Double) {
        self.adminTokens = admin
        self.hostTokens = host
        self.partners = partners
        self.metrics = metrics
        self.cacheTTL = .milliseconds(Int(cacheSeconds * 1000))
    }

    static func bearer(_ request: HTTPRequest) -> String? {
        bearer(authorization: request.header("authorization"))
    }

    /// The credentials after the scheme `Bearer` (any letter case; spaces before and after it), without surrounding
    /// whitespace; nil for another scheme or none. Read over the header's bytes: splitting and lowercasing it were
    /// 3% of the intake's CPU.
    static func bearer(authorization header: String?) -> String? {
        guard let header else { return nil }
        let bytes = header.utf8
        guard let schemeStart = bytes.firstIndex(where: { $0 != UInt8(ascii: " ") }),
            let schemeEnd = bytes[schemeStart...].firstIndex(of: UInt8(ascii: " ")),
            bytes[schemeStart..<schemeEnd].elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 })
        else { return nil }
        let credentials = header[bytes.index(after: schemeEnd)...]
        return credentials.isEmpty ? nil : credentials.trimmingASCIIWhitespace()
    }

    func requireAdmin(_ request: HTTPRequest) throws(HeraldError) {
        guard isAdmin(authorization: request.header("authorization")) else { throw .unauthorized }
    }

    /// True when an Authorization header carries the admin token (or its previous one: counted unless `counted` is
    /// false, for a check the request's route makes again).
    func isAdmin(authorization: String?, counted: Bool = true) -> Bool {
        admin(authorization: authorization, counted: counted) != nil
    }

    /// Nil unless an Authorization header carries an admin token; else whether it is the previous one (counted).
    func admin(authorization: String?, counted: Bool = true) -> Bool? {
        guard let token = Self.bearer(authorization: authorization), let previous = adminTokens.match(token) else {
            return nil
        }
        if previous && counted { metrics.recordPreviousCredential(.adminToken) }
        return previous
    }

    /// The admin tokens accepted now (the current one first, then the previous one), each as an HMAC-SHA256 keyed
    /// by a console session's cookie token: what the session's stored `admin_token_mac` must be one of, so a session
    /// ends on every intake that no longer accepts the token that opened it (sql/049_console_guards.sql). A plain
    /// SHA-256 would do for a 256-bit random token, but HERALD_ADMIN_TOKEN need only be 16 characters an operator
    /// chose; keyed by the cookie token, which the database never holds, the column gives its reader nothing to
    /// test guesses of the admin token against.
    func adminTokenMACs(sessionToken: String) -> [String] {
        let key = Array(sessionToken.utf8)
        return ([adminTokens.current] + (adminTokens.previous.map { [$0] } ?? [])).map {
            Digest.hex(Digest.hmacSHA256(key: key, message: $0))
        }
    }

    func requireHost(_ request: HTTPRequest) throws(HeraldError) {
        guard let token = Self.bearer(request), let previous = hostTokens.match(token) else { throw .unauthorized }
        if previous { metrics.recordPreviousCredential(.hostToken) }
    }

    static let partnerSuspended = HeraldError(
        status: 403, code: "partner_suspended",
        message: "The partner is suspended: nothing of it is accepted or sent until the host resumes it.")

    /// The partner owning the request's key; 401 for a missing, unknown or revoked key, 403 for a suspended partner.
    func requirePartner(_ request: HTTPRequest) throws -> PartnerProfile {
        try partner(authorization: request.header("authorization"))
    }

    /// The partner owning the key of an Authorization header, as `requirePartner`; a previous key and a suspended
    /// partner's refusal are counted unless `counted` is false (for a check the request's route makes again).
    func partner(authorization: String?, counted: Bool = true) throws -> PartnerProfile {
        guard let key = Self.bearer(authorization: authorization), PartnerAPIKey.isWellFormed(key) else {
            throw HeraldError.unauthorized
        }
        let hash = PartnerAPIKey.hash(key)
        let now = ContinuousClock.now
        let entry: CacheEntry
        if let cached = cache.withLock({ $0[hash] }), now - cached.fetched < cacheTTL {
            entry = cached
        } else {
            let found = try partners.findActive(keyHash: hash)
            entry = CacheEntry(
                partner: found?.record.profile, previous: found?.previous ?? false,
                suspended: found?.record.suspendedAt != nil, fetched: now)
            cache.withLock { cache in
                if cache.count >= Self.maxCacheEntries { cache.removeAll(keepingCapacity: true) }
                cache[hash] = entry
            }
        }
        guard let partner = entry.partner else { throw HeraldError.unauthorized }
        if entry.suspended {
            if counted { metrics.recordSuspendedRefusal(miniAppID: partner.miniAppID) }
            throw Self.partnerSuspended
        }
        if entry.previous && counted { metrics.recordPreviousCredential(.partnerKey(miniAppID: partner.miniAppID)) }
        return partner
    }
}
