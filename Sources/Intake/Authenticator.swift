import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import Store
import Synchronization

/// Checks bearer tokens. Admin and host tokens are compared in constant time; partner keys are
/// looked up by their SHA-256 and cached briefly, so a revoked or rotated key is refused on every
/// intake process within `cacheSeconds`.
final class Authenticator: Sendable {
    private struct CacheEntry { let partner: PartnerProfile?; let fetched: ContinuousClock.Instant }

    private let adminToken: [UInt8]
    private let hostToken: [UInt8]
    private let partners: PartnerStore
    private let cacheTTL: Duration
    private let cache = Mutex<[String: CacheEntry]>([:])
    private static let maxCacheEntries = 10_000

    init(adminToken: String, hostToken: String, partners: PartnerStore, cacheSeconds: Double) {
        self.adminToken = Array(adminToken.utf8)
        self.hostToken = Array(hostToken.utf8)
        self.partners = partners
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

    /// True when an Authorization header carries the admin token.
    func isAdmin(authorization: String?) -> Bool {
        guard let token = Self.bearer(authorization: authorization) else { return false }
        return Digest.constantTimeEquals(Array(token.utf8), adminToken)
    }

    func requireHost(_ request: HTTPRequest) throws(HeraldError) {
        guard let token = Self.bearer(request), Digest.constantTimeEquals(Array(token.utf8), hostToken) else {
            throw .unauthorized
        }
    }

    /// The partner owning the request's key; 401 for a missing, unknown or revoked key.
    func requirePartner(_ request: HTTPRequest) throws -> PartnerProfile {
        guard let key = Self.bearer(request), PartnerAPIKey.isWellFormed(key) else { throw HeraldError.unauthorized }
        let hash = PartnerAPIKey.hash(key)
        let now = ContinuousClock.now
        if let entry = cache.withLock({ $0[hash] }), now - entry.fetched < cacheTTL {
            guard let partner = entry.partner else { throw HeraldError.unauthorized }
            return partner
        }
        let partner = try partners.findActive(keyHash: hash)?.profile
        cache.withLock { cache in
            if cache.count >= Self.maxCacheEntries { cache.removeAll(keepingCapacity: true) }
            cache[hash] = CacheEntry(partner: partner, fetched: now)
        }
        guard let partner else { throw HeraldError.unauthorized }
        return partner
    }
}
