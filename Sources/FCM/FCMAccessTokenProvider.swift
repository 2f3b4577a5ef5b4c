import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import Synchronization

/// OAuth2 access tokens for the FCM HTTP v1 API from a service account: an RS256 assertion
/// `{"iss":client_email,"scope":firebase.messaging,"aud":token_uri,
/// "iat","exp"}` exchanged at `token_uri` for an `access_token`.
///
/// The token is cached until `renewalMargin` (5 minutes) before it expires. One exchange is in
/// flight at a time: senders that need a token meanwhile are queued and called back with its
/// result, so nothing blocks the transport's thread.
///
/// Failed exchanges back off (`backoff`, measured on the injected clock): after `n` failures in a row no
/// exchange starts for about base x 2^(n-1) (jittered, capped), and callers meanwhile get the last failure at
/// once instead of each starting an exchange. A token that is past its renewal time but not yet expired is still
/// handed out while exchanges fail. A successful exchange resets the backoff. Thread-safe.
public final class FCMAccessTokenProvider: Sendable {
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// `exp - iat` of the assertion (Google's maximum).
    public static let assertionLifetime = 3600
    public static let defaultRenewalMargin: Duration = .seconds(300)
    /// 1 s after the first failed exchange, doubling up to 5 minutes.
    public static let defaultBackoff = ExponentialBackoff(base: .seconds(1), maximum: .seconds(300))

    /// Why no token could be had. `reason` (`oauth_invalid_grant`, `oauth_connection_lost`) is
    /// stable and safe to record; it never contains the assertion or a token.
    public struct Failure: Error, Sendable, Equatable {
        public let reason: String
        /// The token endpoint refused the service account itself (invalid_grant, an unknown client, a 4xx other
        /// than 408/429) or the assertion could not be signed: Herald's credentials are wrong, and waiting will
        /// not fix them. False for what may pass (unreachable, timeouts, 5xx, 429, a malformed 200).
        public let isSetupFault: Bool

        public init(reason: String, isSetupFault: Bool = false) {
            self.reason = reason
            self.isSetupFault = isSetupFault
        }

        /// What a send that could not get a token comes to.
        public var deliveryResult: DeliveryResult {
            isSetupFault ? .setupFault(reason: reason) : .retry(reason: reason, retryAfter: nil)
        }
    }

    public typealias Completion = @Sendable (Result<String, Failure>) -> Void

    private struct Cached {
        var token: String
        /// Reuse ends here (expiry minus the margin).
        var renewAt: Date
        /// The token is dead from here.
        var expiresAt: Date
    }

    private struct State {
        var cached: Cached?
        var waiters: [Completion] = []
        var fetching = false
        var fetched = 0
        /// Exchanges that failed in a row.
        var failures = 0
        /// The last failure, handed out until `retryAt`.
        var lastFailure: Failure?
        var retryAt: Date?
        var exchanges = 0
    }

    private let serviceAccount: FCMServiceAccount
    private let signingKey: RS256SigningKey
    private let endpoint: UpstreamURL
    private let transport: any FCMTransport
    private let clock: any HeraldClock
    private let renewalMargin: TimeInterval
    private let backoff: ExponentialBackoff
    private let random: @Sendable () -> Double
    private let state = Mutex(State())

    /// `transport` must reach the origin of `serviceAccount.tokenURI`. `random` (uniform in 0..<1) jitters the
    /// backoff; tests pass a fixed value.
    public init(
        serviceAccount: FCMServiceAccount, signingKey: RS256SigningKey, transport: any FCMTransport,
        clock: any HeraldClock, renewalMargin: Duration = FCMAccessTokenProvider.defaultRenewalMargin,
        backoff: ExponentialBackoff = FCMAccessTokenProvider.defaultBackoff,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.serviceAccount = serviceAccount
        self.signingKey = signingKey
        // FCMServiceAccount checked the URI; a path of "/" is only a fallback for hand-made values.
        self.endpoint = (try? UpstreamURL(serviceAccount.tokenURI)) ?? (try! UpstreamURL("https://invalid/"))
        self.transport = transport
        self.clock = clock
        self.renewalMargin = renewalMargin.timeInterval
        self.backoff = backoff
        self.random = random
    }

    /// Calls `completion` with a valid access token: at once (on the caller's thread) when one is
    /// cached or the exchanges are backing off, otherwise after the exchange in flight (on the
    /// transport's thread).
    public func accessToken(_ completion: @escaping Completion) {
        let now = clock.now
        enum Next {
            case answer(Result<String, Failure>)
            case wait, fetch
        }
        let next: Next = state.withLock { state in
            if let cached = state.cached, now < cached.renewAt { return .answer(.success(cached.token)) }
            if let failure = state.lastFailure, let retryAt = state.retryAt, now < retryAt {
                if let cached = state.cached, now < cached.expiresAt { return .answer(.success(cached.token)) }
                return .answer(.failure(failure))
            }
            state.waiters.append(completion)
            if state.fetching { return .wait }
            state.fetching = true
            state.exchanges += 1
            return .fetch
        }
        switch next {
        case .answer(let result): completion(result)
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

    /// Exchanges started so far, successful or not (tests check the backoff with it).
    public var exchangesStarted: Int { state.withLock { $0.exchanges } }

    /// Exchanges that failed in a row, now (0 after a success).
    public var consecutiveFailures: Int { state.withLock { $0.failures } }

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
        return HTTP2Request(
            method: "POST", path: endpoint.path,
            headers: [
                HTTP2Header("content-type", "application/x-www-form-urlencoded"),
                HTTP2Header("accept", "application/json"),
            ], body: Array(form.utf8))
    }

    private func fetch(startedAt: Date) {
        let request: HTTP2Request
        do {
            request = try exchangeRequest(issuedAt: Int(startedAt.timeIntervalSince1970.rounded(.down)))
        } catch {
            return finish(
                .failure(Failure(reason: "oauth_assertion_\(error.code)", isSetupFault: true)),
                startedAt: startedAt)
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

    /// Caches a token (or counts the failure and sets the backoff), wakes every waiter outside the lock.
    private func finish(_ result: Result<(token: String, lifetime: Int), Failure>, startedAt: Date) {
        let now = clock.now
        let (waiters, delivered) = state.withLock { state -> ([Completion], Result<String, Failure>) in
            var delivered = result.map(\.token)
            switch result {
            case .success(let answer):
                // Lifetimes shorter than twice the margin (never from Google) keep half of theirs.
                let margin = min(renewalMargin, Double(answer.lifetime) / 2)
                state.cached = Cached(
                    token: answer.token,
                    renewAt: startedAt.addingTimeInterval(Double(answer.lifetime) - margin),
                    expiresAt: startedAt.addingTimeInterval(Double(answer.lifetime)))
                state.fetched += 1
                state.failures = 0
                state.lastFailure = nil
                state.retryAt = nil
            case .failure(let failure):
                state.failures += 1
                state.lastFailure = failure
                let wait = backoff.delay(afterFailures: state.failures, random: random())
                state.retryAt = now.addingTimeInterval(wait.timeInterval)
                // The old token still works until it expires: better than failing the sends waiting for it.
                if let cached = state.cached, now < cached.expiresAt { delivered = .success(cached.token) }
            }
            state.fetching = false
            defer { state.waiters.removeAll() }
            return (state.waiters, delivered)
        }
        for waiter in waiters { waiter(delivered) }
    }

    /// `{"access_token":"...","expires_in":3599,"token_type":"Bearer"}`, or an OAuth2 error
    /// `{"error":"invalid_grant",...}` whose code becomes the reason. A 4xx other than 408 and 429 is a
    /// refusal of the credentials (RFC 6749 section 5.2 answers 400 or 401): a setup fault.
    static func parse(_ response: HTTP2Response) -> Result<(token: String, lifetime: Int), Failure> {
        let json = try? JSONParser.parse(response.body)
        guard response.status == 200 else {
            let refused = (400..<500).contains(response.status) && response.status != 408 && response.status != 429
            if let code = json?["error"]?.stringValue, !code.isEmpty, code.utf8.count <= 40,
                code.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == UInt8(ascii: "_") })
            {
                return .failure(Failure(reason: "oauth_" + code, isSetupFault: refused))
            }
            return .failure(Failure(reason: "oauth_http_\(response.status)", isSetupFault: refused))
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
