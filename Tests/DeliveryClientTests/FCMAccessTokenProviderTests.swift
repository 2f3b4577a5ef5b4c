import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Synchronization
import Testing

@testable import FCM

/// A transport that holds completions until the test releases them.
final class DeferredTransport: FCMTransport {
    private let pending = Mutex<[(HTTP2Request, @Sendable (ScriptedTransport.Answer) -> Void)]>([])

    func send(_ request: HTTP2Request, completion: @escaping @Sendable (ScriptedTransport.Answer) -> Void) {
        pending.withLock { $0.append((request, completion)) }
    }

    func connect() {}
    func shutdown() {}

    var count: Int { pending.withLock { $0.count } }

    func completeAll(_ answer: ScriptedTransport.Answer) {
        let all = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        for (_, completion) in all { completion(answer) }
    }
}

@Suite struct FCMAccessTokenProviderTests {
    let credentials = TestCredentials.shared
    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))

    func account() throws -> FCMServiceAccount {
        try FCMServiceAccount(contentsOfFile: credentials.fcmCredentialsFile)
    }

    /// `random` 1 makes every backoff wait its full step (1 s, 2 s, 4 s, ... up to 300 s).
    func makeProvider(_ transport: any FCMTransport, random: Double = 1) throws -> FCMAccessTokenProvider {
        let account = try account()
        return FCMAccessTokenProvider(
            serviceAccount: account, signingKey: try RS256SigningKey(pem: account.privateKey),
            transport: transport, clock: clock, random: { random })
    }

    static func issuing(lifetime: Int = 3600) -> ScriptedTransport {
        ScriptedTransport { _, index in
            .success(
                .json(
                    200,
                    #"{"access_token":"ya29.token-\#(index)","expires_in":\#(lifetime),"#
                        + #""token_type":"Bearer"}"#))
        }
    }

    @Test func exchangePostsASignedAssertionAsAForm() async throws {
        let transport = Self.issuing()
        let provider = try makeProvider(transport)
        #expect(try await provider.accessToken() == "ya29.token-0")
        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/token")
        #expect(request.header("content-type") == "application/x-www-form-urlencoded")
        let prefix = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
        #expect(request.bodyText.hasPrefix(prefix))
        let assertion = try #require(JSONWebToken.decode(String(request.bodyText.dropFirst(prefix.count))))
        #expect(JSONWriter.string(assertion.header) == #"{"alg":"RS256","typ":"JWT"}"#)
        #expect(
            JSONWriter.string(assertion.claims) == #"{"iss":"herald@herald-sim.iam.gserviceaccount.com","#
                + #""scope":"https://www.googleapis.com/auth/firebase.messaging","#
                + #""aud":"https://127.0.0.1:8443/token","iat":1750000000,"exp":1750003600}"#)
        let pem = try String(contentsOfFile: credentials.fcmPrivateKeyFile, encoding: .utf8)
        let verifier = try RS256VerifyingKey(pem: pem)
        #expect(verifier.isValidSignature(assertion.signature, for: assertion.signingInput))
    }

    @Test func tokenIsReusedUntilFiveMinutesBeforeExpiry() async throws {
        let transport = Self.issuing()
        let provider = try makeProvider(transport)
        #expect(try await provider.accessToken() == "ya29.token-0")
        clock.advance(.seconds(55 * 60 - 1))
        #expect(try await provider.accessToken() == "ya29.token-0")
        #expect(provider.tokensFetched == 1)
        clock.advance(.seconds(1))
        #expect(try await provider.accessToken() == "ya29.token-1")
        #expect(provider.tokensFetched == 2)
        #expect(transport.requests.count == 2)
    }

    @Test func shortLifetimesKeepHalfOfTheirTime() async throws {
        let transport = Self.issuing(lifetime: 60)
        let provider = try makeProvider(transport)
        #expect(try await provider.accessToken() == "ya29.token-0")
        clock.advance(.seconds(29))
        #expect(try await provider.accessToken() == "ya29.token-0")
        clock.advance(.seconds(1))
        #expect(try await provider.accessToken() == "ya29.token-1")
    }

    @Test func oneExchangeInFlightServesEveryWaiter() throws {
        let transport = DeferredTransport()
        let provider = try makeProvider(transport)
        let results = Mutex<[Result<String, FCMAccessTokenProvider.Failure>]>([])
        for _ in 0..<10 {
            provider.accessToken { result in results.withLock { $0.append(result) } }
        }
        #expect(transport.count == 1)
        #expect(results.withLock { $0.isEmpty })
        transport.completeAll(.success(.json(200, #"{"access_token":"shared","expires_in":3600}"#)))
        let all = results.withLock { $0 }
        #expect(all.count == 10)
        #expect(all.allSatisfy { (try? $0.get()) == "shared" })
        // Cached now: answered at once, no new exchange.
        provider.accessToken { result in results.withLock { $0.append(result) } }
        #expect(results.withLock { $0.count } == 11)
        #expect(transport.count == 0)
        #expect(provider.tokensFetched == 1)
    }

    @Test func failuresReachEveryWaiterAndTheNextCallTriesAgain() async throws {
        let transport = ScriptedTransport { _, index in
            switch index {
            case 0:
                return .success(.json(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#))
            case 1: return .failure(HTTP2Error(.connectionLost, "closed"))
            case 2: return .success(.json(500, "oops"))
            case 3: return .success(.json(200, #"{"token_type":"Bearer"}"#))
            default: return .success(.json(200, #"{"access_token":"finally","expires_in":3600}"#))
            }
        }
        let provider = try makeProvider(transport)
        let expected = [
            FCMAccessTokenProvider.Failure(reason: "oauth_invalid_grant", isSetupFault: true),
            FCMAccessTokenProvider.Failure(reason: "oauth_connection_lost"),
            FCMAccessTokenProvider.Failure(reason: "oauth_http_500"),
            FCMAccessTokenProvider.Failure(reason: "oauth_invalid_response"),
        ]
        for (index, failure) in expected.enumerated() {
            await #expect(throws: failure) { try await provider.accessToken() }
            // Past this failure's backoff (1 s, 2 s, 4 s, 8 s): the next call exchanges again.
            clock.advance(.seconds(1 << index))
        }
        #expect(try await provider.accessToken() == "finally")
        #expect(provider.tokensFetched == 1)
        #expect(provider.exchangesStarted == 5)
        #expect(provider.consecutiveFailures == 0)
    }

    @Test func exchangeAnswersAreClassified() {
        func failure(_ status: Int, _ body: String) -> FCMAccessTokenProvider.Failure? {
            if case .failure(let failure) = FCMAccessTokenProvider.parse(.json(status, body)) { return failure }
            return nil
        }
        // Refusals of the service account: Herald's credentials (RFC 6749 section 5.2: 400 or 401).
        #expect(
            failure(400, #"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#)?
                .deliveryResult == .setupFault(reason: "oauth_invalid_grant"))
        #expect(
            failure(401, #"{"error":"invalid_client"}"#)?.deliveryResult
                == .setupFault(reason: "oauth_invalid_client"))
        #expect(failure(403, "")?.deliveryResult == .setupFault(reason: "oauth_http_403"))
        #expect(failure(404, "<html>")?.deliveryResult == .setupFault(reason: "oauth_http_404"))
        // What may pass: throttling, server errors, a garbled success.
        #expect(
            failure(429, #"{"error":"rate_limit_exceeded"}"#)?.deliveryResult
                == .retry(reason: "oauth_rate_limit_exceeded", retryAfter: nil))
        #expect(failure(408, "")?.deliveryResult == .retry(reason: "oauth_http_408", retryAfter: nil))
        #expect(
            failure(500, #"{"error":"internal_failure"}"#)?.deliveryResult
                == .retry(reason: "oauth_internal_failure", retryAfter: nil))
        #expect(failure(503, "")?.deliveryResult == .retry(reason: "oauth_http_503", retryAfter: nil))
        #expect(
            failure(200, #"{"token_type":"Bearer"}"#)?.deliveryResult
                == .retry(reason: "oauth_invalid_response", retryAfter: nil))
    }

    @Test func failedExchangesBackOffExponentiallyAndFailFastMeanwhile() async throws {
        let refusing = Mutex(true)
        let transport = ScriptedTransport { _, index in
            refusing.withLock { $0 }
                ? .success(.json(400, #"{"error":"invalid_grant"}"#))
                : .success(.json(200, #"{"access_token":"ya29.after-\#(index)","expires_in":3600}"#))
        }
        let provider = try makeProvider(transport)
        let refused = FCMAccessTokenProvider.Failure(reason: "oauth_invalid_grant", isSetupFault: true)
        // Each failure doubles the wait: 1 s, 2 s, 4 s, 8 s. Calls inside the wait fail with the last failure
        // and start nothing.
        for failures in 1...4 {
            await #expect(throws: refused) { try await provider.accessToken() }
            #expect(provider.exchangesStarted == failures)
            #expect(provider.consecutiveFailures == failures)
            let wait = Duration.seconds(1 << (failures - 1))
            clock.advance(wait - .milliseconds(1))
            for _ in 0..<5 {
                await #expect(throws: refused) { try await provider.accessToken() }
            }
            #expect(provider.exchangesStarted == failures)
            clock.advance(.milliseconds(1))
        }
        #expect(transport.requests.count == 4)
        refusing.withLock { $0 = false }
        #expect(try await provider.accessToken() == "ya29.after-4")
        #expect(provider.consecutiveFailures == 0)
    }

    @Test func theBackoffIsCappedAndJittered() async throws {
        let transport = ScriptedTransport { _, _ in .failure(HTTP2Error(.connectFailed, "refused")) }
        // random 0: every wait is half its step.
        let provider = try makeProvider(transport, random: 0)
        for _ in 0..<12 {
            await #expect(throws: FCMAccessTokenProvider.Failure(reason: "oauth_connect_failed")) {
                try await provider.accessToken()
            }
            clock.advance(.seconds(150))
        }
        // 1 s, 2 s, ... doubling past 300 s is capped there: half of 300 s (150 s) always sufficed.
        #expect(provider.exchangesStarted == 12)
        // A second short of that cap the provider is still waiting.
        clock.advance(.seconds(-1))
        await #expect(throws: FCMAccessTokenProvider.Failure(reason: "oauth_connect_failed")) {
            try await provider.accessToken()
        }
        #expect(provider.exchangesStarted == 12)
    }

    @Test func aStillValidTokenIsServedWhileRenewalsFail() async throws {
        let renewals = Mutex(0)
        let transport = ScriptedTransport { _, index in
            if index == 0 { return .success(.json(200, #"{"access_token":"first","expires_in":3600}"#)) }
            renewals.withLock { $0 += 1 }
            return .success(.json(503, ""))
        }
        let provider = try makeProvider(transport)
        #expect(try await provider.accessToken() == "first")
        // Past the renewal time (55 min) but before expiry (60 min): the exchange fails, the old token serves.
        clock.advance(.seconds(56 * 60))
        #expect(try await provider.accessToken() == "first")
        #expect(try await provider.accessToken() == "first")
        #expect(renewals.withLock { $0 } == 1)
        clock.advance(.seconds(4 * 60))
        await #expect(throws: FCMAccessTokenProvider.Failure(reason: "oauth_http_503")) {
            try await provider.accessToken()
        }
    }

    @Test func invalidateDropsOnlyTheTokenItNames() async throws {
        let transport = Self.issuing()
        let provider = try makeProvider(transport)
        let first = try await provider.accessToken()
        provider.invalidate(seen: "some-other-token")
        #expect(try await provider.accessToken() == first)
        provider.invalidate(seen: first)
        #expect(try await provider.accessToken() == "ya29.token-1")
        provider.invalidate(seen: first)
        #expect(try await provider.accessToken() == "ya29.token-1")
        #expect(provider.tokensFetched == 2)
    }
}
