import FCM
import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Synchronization
import Testing

/// A transport that holds completions until the test releases them.
final class DeferredTransport: FCMTransport {
    private let pending = Mutex<[(HTTP2Request, @Sendable (ScriptedTransport.Answer) -> Void)]>([])

    func send(_ request: HTTP2Request, completion: @escaping @Sendable (ScriptedTransport.Answer) -> Void) {
        pending.withLock { $0.append((request, completion)) }
    }

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
    let clock = TestClock()

    func account() throws -> FCMServiceAccount {
        try FCMServiceAccount(contentsOfFile: credentials.fcmCredentialsFile)
    }

    func makeProvider(_ transport: any FCMTransport) throws -> FCMAccessTokenProvider {
        let account = try account()
        return FCMAccessTokenProvider(serviceAccount: account, signingKey: try RS256SigningKey(pem: account.privateKey),
                                      transport: transport, clock: clock)
    }

    static func issuing(lifetime: Int = 3600) -> ScriptedTransport {
        ScriptedTransport { _, index in
            .success(.json(200, #"{"access_token":"ya29.token-\#(index)","expires_in":\#(lifetime),"#
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
        #expect(JSONWriter.string(assertion.claims) == #"{"iss":"herald@herald-sim.iam.gserviceaccount.com","#
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
        for expected in ["oauth_invalid_grant", "oauth_connection_lost", "oauth_http_500", "oauth_invalid_response"] {
            await #expect(throws: FCMAccessTokenProvider.Failure(reason: expected)) { try await provider.accessToken() }
        }
        #expect(try await provider.accessToken() == "finally")
        #expect(provider.tokensFetched == 1)
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
