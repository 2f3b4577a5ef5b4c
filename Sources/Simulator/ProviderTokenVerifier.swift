import APNs
import HeraldCore
import HeraldCrypto
import Synchronization

/// Checks APNs provider tokens (`authorization: bearer <JWT>`) as APNs does, remembering per
/// connection which token it accepted so a busy connection pays for one ECDSA verification,
/// not one per request.
///
/// Rules: an ES256 JWT whose header has a 10-character `kid` and whose claims have a
/// 10-character `iss` and a numeric `iat`, signed by the configured key (403
/// InvalidProviderToken; `iat` more than 60 s in the future is invalid too); `iat` more than an
/// hour old is 403 ExpiredProviderToken, also for a token accepted earlier; a valid token whose `kid` is a key
/// scoped to the other environment (`keyEnvironments`) is 403 BadEnvironmentKeyIdInToken; a connection that
/// switches to a different valid token whose `iat` is less than 20 minutes after the `iat` of
/// the token it had is answered 429 TooManyProviderTokenUpdates and keeps its old token.
/// Measuring the 20 minutes between issue times (not arrival times) means a client that mints
/// at most every 20 minutes never sees the 429, however old its connection is.
final class ProviderTokenVerifier: Sendable {
    static let maxAge: Double = 3600
    static let minRefreshInterval: Double = 1200
    static let allowedClockSkew: Double = 60
    /// Connections remembered before the table is emptied (the server does not say when a
    /// connection closes; forgetting costs each live connection one more verification).
    static let maxConnections = 8192

    private struct ConnectionState {
        /// The whole header value of the token in force, and its `iat`.
        var accepted: (authorization: String, issuedAt: Double)?
        /// The last token that failed verification, and how (its failure cannot change with time).
        var rejected: (authorization: String, rejection: APNsRejection)?
    }

    private let key: ES256VerifyingKey?
    private let clock: any HeraldClock
    /// The environment this server stands for, and the environment each scoped key id is valid in alone.
    private let environment: APNsEnvironment
    private let keyEnvironments: [String: APNsEnvironment]
    private let connections = Mutex<[UInt64: ConnectionState]>([:])

    /// `key` nil: signatures are not checked (a sandbox without the .p8); everything else is. A key id missing
    /// from `keyEnvironments` is valid in both environments (a team key).
    init(
        key: ES256VerifyingKey?, clock: any HeraldClock, environment: APNsEnvironment = .production,
        keyEnvironments: [String: APNsEnvironment] = [:]
    ) {
        self.key = key
        self.clock = clock
        self.environment = environment
        self.keyEnvironments = keyEnvironments
    }

    /// nil when the token may send; otherwise the rejection to answer with.
    func check(authorization: String?, connectionID: UInt64) -> APNsRejection? {
        guard let authorization, !authorization.isEmpty else { return .missingProviderToken }
        let now = clock.now.timeIntervalSince1970
        // The hot path: the same header value as last time on this connection.
        let cached: APNsRejection?? = connections.withLock { table in
            guard let state = table[connectionID] else { return .none }
            if let accepted = state.accepted, accepted.authorization == authorization {
                return .some(now - accepted.issuedAt > Self.maxAge ? .expiredProviderToken : nil)
            }
            if let rejected = state.rejected, rejected.authorization == authorization {
                return .some(rejected.rejection)
            }
            return .none
        }
        if let cached { return cached }

        // A new token for this connection: verify outside the lock (about 0.1 ms of ECDSA).
        let verified = verify(authorization)
        var refusal: APNsRejection? = verified == nil ? .invalidProviderToken : nil
        if let keyID = verified?.keyID, let scope = keyEnvironments[keyID], scope != environment {
            refusal = .badEnvironmentKeyIDInToken
        }
        guard let issuedAt = verified?.issuedAt, refusal == nil else {
            let rejection = refusal ?? .invalidProviderToken
            connections.withLock { table in
                Self.makeRoom(&table)
                table[connectionID, default: ConnectionState()].rejected = (authorization, rejection)
            }
            return rejection
        }
        if issuedAt > now + Self.allowedClockSkew { return .invalidProviderToken }
        if now - issuedAt > Self.maxAge { return .expiredProviderToken }
        return connections.withLock { table -> APNsRejection? in
            if let previous = table[connectionID]?.accepted, previous.authorization != authorization,
                issuedAt - previous.issuedAt < Self.minRefreshInterval
            {
                return .tooManyProviderTokenUpdates
            }
            Self.makeRoom(&table)
            table[connectionID, default: ConnectionState()].accepted = (authorization, issuedAt)
            return nil
        }
    }

    /// The token's `iat` and `kid` if it is a well-formed ES256 provider token signed by the key.
    func verify(_ authorization: String) -> (issuedAt: Double, keyID: String)? {
        guard let token = Self.bearerToken(authorization), let jwt = JSONWebToken.decode(token),
            jwt.algorithm == "ES256",
            let keyID = jwt.header["kid"]?.stringValue, keyID.utf8.count == 10,
            let issuer = jwt.claims["iss"]?.stringValue, issuer.utf8.count == 10,
            let issuedAt = jwt.claims["iat"]?.numberValue, issuedAt >= 0
        else { return nil }
        if let key, !key.isValidSignature(jwt.signature, for: jwt.signingInput) { return nil }
        return (issuedAt, keyID)
    }

    /// The token after `bearer ` (the scheme is case-insensitive, as in HTTP).
    static func bearerToken(_ value: String) -> String? {
        let bytes = value.utf8
        guard bytes.count > 7 else { return nil }
        let scheme = value.prefix(7)
        guard scheme.lowercased() == "bearer " else { return nil }
        var token = value.dropFirst(7)
        while token.first == " " { token = token.dropFirst() }
        while token.last == " " { token = token.dropLast() }
        return token.isEmpty ? nil : String(token)
    }

    private static func makeRoom(_ table: inout [UInt64: ConnectionState]) {
        if table.count >= maxConnections { table.removeAll(keepingCapacity: true) }
    }
}
