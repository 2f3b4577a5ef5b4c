import APNs
import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@Suite struct APNsProviderTokenTests {
    let credentials = TestCredentials.shared
    let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_000))

    func makeToken() throws -> APNsProviderToken {
        let key = try ES256SigningKey(pem: try String(contentsOfFile: credentials.apnsKeyFile, encoding: .utf8))
        return APNsProviderToken(
            signingKey: key, keyID: credentials.apnsKeyID, teamID: credentials.apnsTeamID,
            clock: clock)
    }

    @Test func tokenHasAppleHeaderAndClaimsAndVerifies() throws {
        let provider = try makeToken()
        let token = try provider.current()
        let decoded = try #require(JSONWebToken.decode(token))
        #expect(JSONWriter.string(decoded.header) == #"{"alg":"ES256","kid":"SIMKEY0001"}"#)
        #expect(JSONWriter.string(decoded.claims) == #"{"iss":"SIMTEAM001","iat":1750000000}"#)
        let verifier = try ES256VerifyingKey(pem: try String(contentsOfFile: credentials.apnsKeyFile, encoding: .utf8))
        #expect(verifier.isValidSignature(decoded.signature, for: decoded.signingInput))
        #expect(decoded.signature.count == 64)
    }

    @Test func iatIsWholeSecondsOfTheInjectedClock() throws {
        clock.set(Date(timeIntervalSince1970: 1_760_000_123.9))
        let provider = try makeToken()
        let claims = try #require(JSONWebToken.decode(try provider.current())).claims
        #expect(claims["iat"]?.numberValue == 1_760_000_123)
        #expect(provider.issuedAt == Date(timeIntervalSince1970: 1_760_000_123))
    }

    @Test func tokenIsReusedForFiftyMinutesThenRenewed() throws {
        let provider = try makeToken()
        let first = try provider.current()
        clock.advance(.seconds(49 * 60 + 59))
        #expect(try provider.current() == first)
        #expect(provider.issuedCount == 1)
        clock.advance(.seconds(1))
        let second = try provider.current()
        #expect(second != first)
        #expect(provider.issuedCount == 2)
        #expect(try provider.current() == second)
    }

    @Test func invalidateRenewsATokenOlderThanTwentyMinutes() throws {
        let provider = try makeToken()
        let first = try provider.current()
        clock.advance(.seconds(20 * 60))
        #expect(provider.invalidate(seen: first))
        let second = try provider.current()
        #expect(second != first)
        #expect(provider.issuedCount == 2)
        // A second report about the old token (another stream) changes nothing.
        #expect(!provider.invalidate(seen: first))
        #expect(try provider.current() == second)
        #expect(provider.issuedCount == 2)
    }

    @Test func invalidateNeverRenewsMoreOftenThanEveryTwentyMinutes() throws {
        let provider = try makeToken()
        let first = try provider.current()
        clock.advance(.seconds(19 * 60 + 59))
        #expect(!provider.invalidate(seen: first))
        #expect(try provider.current() == first)
        #expect(provider.issuedCount == 1)
        // Once old enough, the same report does renew.
        clock.advance(.seconds(1))
        #expect(provider.invalidate(seen: first))
        #expect(try provider.current() != first)
    }

    @Test func invalidateOfAnUnknownTokenIsIgnored() throws {
        let provider = try makeToken()
        #expect(!provider.invalidate(seen: "nothing issued yet"))
        let first = try provider.current()
        clock.advance(.seconds(30 * 60))
        #expect(!provider.invalidate(seen: "some.other.token"))
        #expect(try provider.current() == first)
    }

    @Test func concurrentCallersShareOneToken() async throws {
        let provider = try makeToken()
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try provider.current() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(provider.issuedCount == 1)
    }
}
