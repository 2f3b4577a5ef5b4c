import Foundation
import HeraldCore
import HeraldCrypto
import Synchronization

/// The APNs provider authentication token: an ES256 JWT with header
/// `{"alg":"ES256","kid":keyID}` and claims `{"iss":teamID,"iat":now}`, shared by every request.
///
/// APNs rejects a token older than an hour (403 ExpiredProviderToken) and one renewed more often
/// than every 20 minutes (429 TooManyProviderTokenUpdates), so the token is cached, renewed once
/// it is `renewalAge` old (50 minutes), and renewed early on ExpiredProviderToken or InvalidProviderToken
/// only if it is at least `minimumAge` (20 minutes) old. Thread-safe: the first caller past the deadline signs,
/// the others get its token.
public final class APNsProviderToken: Sendable {
    /// Tokens are renewed once this old (APNs accepts them for 60 minutes).
    public static let defaultRenewalAge: Duration = .seconds(50 * 60)
    /// A token is never replaced before this age (APNs' floor between renewals).
    public static let defaultMinimumAge: Duration = .seconds(20 * 60)

    private struct Cached {
        var token: String
        /// `bearer <token>`: made once per token, not once per request.
        var authorization: String
        var issuedAt: Date
    }

    private struct State {
        var cached: Cached?
        /// Set by `invalidate(seen:)`: the next `current()` renews.
        var stale = false
        var issuedCount = 0
    }

    private let signingKey: ES256SigningKey
    private let keyID: String
    private let teamID: String
    private let clock: any HeraldClock
    private let renewalAge: TimeInterval
    private let minimumAge: TimeInterval
    private let state = Mutex(State())

    public init(
        signingKey: ES256SigningKey, keyID: String, teamID: String, clock: any HeraldClock,
        renewalAge: Duration = APNsProviderToken.defaultRenewalAge,
        minimumAge: Duration = APNsProviderToken.defaultMinimumAge
    ) {
        self.signingKey = signingKey
        self.keyID = keyID
        self.teamID = teamID
        self.clock = clock
        self.renewalAge = renewalAge.timeInterval
        self.minimumAge = minimumAge.timeInterval
    }

    /// One provider token, `{"alg":"ES256","kid":keyID}.{"iss":teamID,"iat":issuedAt}` (whole
    /// seconds), signed with `signingKey`. The simulator's `mint-apns-jwt` uses it too.
    public static func sign(signingKey: ES256SigningKey, keyID: String, teamID: String, issuedAt: Date)
        throws(CryptoError) -> String
    {
        let header = JSONValue.object([("alg", .string("ES256")), ("kid", .string(keyID))])
        let claims = JSONValue.object([
            ("iss", .string(teamID)), ("iat", .number(issuedAt.timeIntervalSince1970.rounded(.down))),
        ])
        return try JSONWebToken.encode(header: header, claims: claims, sign: signingKey.sign)
    }

    /// The token to send now: the cached one, or a freshly signed one when there is none, it is
    /// `renewalAge` old, or it was invalidated and is at least `minimumAge` old.
    public func current() throws(CryptoError) -> String {
        try currentWithAuthorization().token
    }

    /// `current()` and its `authorization` header value (`bearer <token>`), kept with the token so a request
    /// does not build the header anew.
    public func currentWithAuthorization() throws(CryptoError) -> (token: String, authorization: String) {
        let now = clock.now
        return try state.withLock {
            (state: inout State) throws(CryptoError) -> (token: String, authorization: String) in
            if let cached = state.cached {
                let age = now.timeIntervalSince(cached.issuedAt)
                let due = age >= renewalAge || (state.stale && age >= minimumAge)
                if !due { return (cached.token, cached.authorization) }
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let token = try Self.sign(signingKey: signingKey, keyID: keyID, teamID: teamID, issuedAt: issuedAt)
            let authorization = APNsRequestBuilder.authorization(providerToken: token)
            state.cached = Cached(token: token, authorization: authorization, issuedAt: issuedAt)
            state.stale = false
            state.issuedCount += 1
            return (token, authorization)
        }
    }

    /// APNs answered ExpiredProviderToken or InvalidProviderToken for `token`. Marks it for renewal
    /// if it is still the current one, and returns true when the next `current()` will sign a new token (it is at
    /// least `minimumAge` old). False when another request already renewed it, or when it is too
    /// young to replace (the clocks disagree: renewing would only earn TooManyProviderTokenUpdates).
    @discardableResult
    public func invalidate(seen token: String) -> Bool {
        let now = clock.now
        return state.withLock { state in
            guard let cached = state.cached, cached.token == token else { return false }
            guard now.timeIntervalSince(cached.issuedAt) >= minimumAge else { return false }
            state.stale = true
            return true
        }
    }

    /// Tokens signed so far (a metric; tests check reuse with it).
    public var issuedCount: Int { state.withLock { $0.issuedCount } }

    /// When the current token was issued (nil before the first).
    public var issuedAt: Date? { state.withLock { $0.cached?.issuedAt } }
}
