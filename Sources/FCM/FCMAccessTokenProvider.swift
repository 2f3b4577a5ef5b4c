import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import Synchronization

/// OAuth2 access tokens for the FCM HTTP v1 API from a service account (protocol-notes
/// section 7): an RS256 assertion `{"iss":client_email,"scope":firebase.messaging,"aud":token_uri,
/// "iat","exp"}` exchanged at `token_uri` for an `access_token`.
///
/// The token is cached until `renewalMargin` (5 minutes) before it expires. One exchange is in
/// flight at a time: senders that need a token meanwhile are queued and called back with its
/// result, so nothing blocks the transport's thread. Thread-safe.
public final class FCMAccessTokenProvider: Sendable {
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// `exp - iat` of the assertion (Google's maximum).
    public static let assertionLifetime = 3600
    public static let defaultRenewalMargin: Duration = .seconds(300)

    /// Why no token could be had. `reason` (`oauth_invalid_grant`, `oauth_connection_lost`) is
    /// stable and safe to record; it never contains the assertion or a token.
    public struct Failure: Error, Sendable, Equatable {
        public let reason: String

        public init(reason: String) {
            self.reason = reason
        }
    }

    public typealias Completion = @Sendable (Result<String, Failure>) -> Void

    private struct Cached {
        var token: String
        /// Reuse ends here (expiry minus the margin).
        var renewAt: Date
    }

    private struct State {
        var cached: Cached?
        var waiters: [Completion] = []
        var fetching = false
        var fetched = 0
    }

    private let serviceAccount: FCMServiceAccount
    private let signingKey: RS256SigningKey
    private let endpoint: FCMEndpoint
    private let transport: any FCMTransport
    private let clock: any HeraldClock
    private let renewalMargin: TimeInterval
    private let state = Mutex(State())

    /// `transport` must reach the origin of `serviceAccount.tokenURI`.
    public init(serviceAccount: FCMServiceAccount, signingKey: RS256SigningKey, transport: any FCMTransport,
                clock: any HeraldClock, renewalMargin: Duration = FCMAccessTokenProvider.defaultRenewalMargin) {
        self.serviceAccount = serviceAccount
        self.signingKey = signingKey
        // FCMServiceAccount checked the URI; a path of "/" is only a fallback for hand-made values.
        self.endpoint = FCMEndpoint(url: serviceAccount.tokenURI) ?? FCMEndpoint(url: "https://invalid/")!
        self.transport = transport
        self.clock = clock
        let parts = renewalMargin.components
        self.renewalMargin = TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    /// Calls `completion` with a valid access token: at once (on the caller's thread) when one is
    /// cached, otherwise after the exchange in flight (on the transport's thread).
    public func accessToken(_ completion: @escaping Completion) {
        let now = clock.now
        enum Next { case cached(String), wait, fetch }
        let next: Next = state.withLock { state in
            if let cached = state.cached, now < cached.renewAt { return .cached(cached.token) }
            state.waiters.append(completion)
            if state.fetching { return .wait }
            state.fetching = true
            return .fetch
        }
        switch next {
        case .cached(let token): completion(.success(token))
        case .wait: break
        case .fetch: fetch(startedAt: now)
        }
    }

    /// `accessToken(_:)` for async callers.
    public func accessToken() async throws(Failure) -> String {
        let result = await withCheckedContinuation { continuation in
            accessToken { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// FCM answered 401 for `token`: drop it (unless it was already replaced) so the next caller
    /// fetches a new one.
    public func invalidate(seen token: String) {
        state.withLock { state in
            if state.cached?.token == token { state.cached = nil }
        }
    }

    /// Access tokens obtained so far (a metric; tests check reuse with it).
    public var tokensFetched: Int { state.withLock { $0.fetched } }

    /// The form body of the exchange for an assertion issued at `issuedAt` (UNIX seconds).
    func exchangeRequest(issuedAt: Int) throws(CryptoError) -> HTTP2Request {
        let header: JSONValue = .object([("alg", .string("RS256")), ("typ", .string("JWT"))])
        let claims: JSONValue = .object([
            ("iss", .string(serviceAccount.clientEmail)),
            ("scope", .string(Self.scope)),
            ("aud", .string(serviceAccount.tokenURI)),
            ("iat", .number(Double(issuedAt))),
            ("exp", .number(Double(issuedAt + Self.assertionLifetime))),
        ])
        let assertion = try JSONWebToken.encode(header: header, claims: claims, sign: signingKey.sign)
        // The assertion is base64url and dots only: nothing to percent-encode.
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion
        return HTTP2Request(method: "POST", path: endpoint.path, headers: [
            HTTP2Header("content-type", "application/x-www-form-urlencoded"),
            HTTP2Header("accept", "application/json"),
        ], body: Array(form.utf8))
    }

    private func fetch(startedAt: Date) {
        let request: HTTP2Request
        do {
            request = try exchangeRequest(issuedAt: Int(startedAt.timeIntervalSince1970.rounded(.down)))
        } catch {
            return finish(.failure(Failure(reason: "oauth_assertion_\(error.code)")), startedAt: startedAt)
        }
        transport.send(request) { [self] result in
            switch result {
            case .failure(let error):
                finish(.failure(Failure(reason: "oauth_" + error.code.rawValue)), startedAt: startedAt)
            case .success(let response):
                finish(Self.parse(response), startedAt: startedAt)
            }
        }
    }

    /// Caches a token, wakes every waiter outside the lock.
    private func finish(_ result: Result<(token: String, lifetime: Int), Failure>, startedAt: Date) {
        let waiters = state.withLock { state -> [Completion] in
            if case .success(let answer) = result {
                // Lifetimes shorter than twice the margin (never from Google) keep half of theirs.
                let margin = min(renewalMargin, Double(answer.lifetime) / 2)
                state.cached = Cached(token: answer.token,
                                      renewAt: startedAt.addingTimeInterval(Double(answer.lifetime) - margin))
                state.fetched += 1
            }
            state.fetching = false
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        let delivered = result.map(\.token)
        for waiter in waiters { waiter(delivered) }
    }

    /// `{"access_token":"...","expires_in":3599,"token_type":"Bearer"}`, or an OAuth2 error
    /// `{"error":"invalid_grant",...}` whose code becomes the reason.
    static func parse(_ response: HTTP2Response) -> Result<(token: String, lifetime: Int), Failure> {
        let json = try? JSONParser.parse(response.body)
        guard response.status == 200 else {
            if let code = json?["error"]?.stringValue, !code.isEmpty, code.utf8.count <= 40,
               code.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "_") }) {
                return .failure(Failure(reason: "oauth_" + code))
            }
            return .failure(Failure(reason: "oauth_http_\(response.status)"))
        }
        guard let token = json?["access_token"]?.stringValue, !token.isEmpty else {
            return .failure(Failure(reason: "oauth_invalid_response"))
        }
        let expiresIn = json?["expires_in"]?.numberValue ?? json?["expires_in"]?.stringValue.flatMap(Double.init)
        // Google always sends expires_in; without it, assume its usual hour.
        let lifetime = expiresIn.map { Int(max(0, min($0, 86_400))) } ?? 3600
        return .success((token, lifetime))
    }
}
