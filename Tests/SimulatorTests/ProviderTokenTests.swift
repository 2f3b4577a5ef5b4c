import APNs
import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@testable import Simulator

/// APNs provider-token rules: signature, shape, age, and how often a connection may change token.
@Suite("APNs provider tokens")
struct ProviderTokenTests {
    @Test func tokenSignedByAnotherKeyIsInvalid() async throws {
        let harness = try SimulatorHarness()
        let otherKey = try ES256SigningKey(
            pem: String(contentsOfFile: harness.credentials.serverKeyFile, encoding: .utf8))
        let jwt = try SimulatorHarness.mint(issuedAt: harness.clock.now, key: otherKey)
        let response = try await harness.apns(jwt: jwt)
        #expect(response.status == 403)
        #expect(response.reason == "InvalidProviderToken")
        // The failure is remembered for the connection, and the answer stays the same.
        #expect(try await harness.apns(jwt: jwt).reason == "InvalidProviderToken")
    }

    @Test("kid and iss must have 10 characters", arguments: [("SHORTKEY", "SIMTEAM001"), ("SIMKEY0001", "TEAM")])
    func idsOfTheWrongLength(keyID: String, teamID: String) async throws {
        let harness = try SimulatorHarness()
        let jwt = try SimulatorHarness.mint(issuedAt: harness.clock.now, keyID: keyID, teamID: teamID)
        let response = try await harness.apns(jwt: jwt)
        #expect(response.status == 403)
        #expect(response.reason == "InvalidProviderToken")
    }

    @Test("a valid token of a key scoped to the other environment is 403 BadEnvironmentKeyIdInToken")
    func keyScopedToTheOtherEnvironment() async throws {
        let scopes: [String: APNsEnvironment] = ["SIMKEY0001": .production, "SANDBOX001": .sandbox]
        let sandbox = try SimulatorHarness(apnsEnvironment: .sandbox, apnsKeyEnvironments: scopes)
        let refused = try await sandbox.apns()
        #expect(refused.status == 403)
        #expect(refused.reason == "BadEnvironmentKeyIdInToken")
        // Remembered for the connection, as any refused token.
        #expect(try await sandbox.apns().reason == "BadEnvironmentKeyIdInToken")
        // The sandbox's own key sends on the same connection (no accepted token was replaced).
        let own = try SimulatorHarness.mint(issuedAt: sandbox.clock.now, keyID: "SANDBOX001")
        #expect(try await sandbox.apns(jwt: own).status == 200)

        let production = try SimulatorHarness(apnsKeyEnvironments: scopes)
        #expect(try await production.apns().status == 200)
        // A key id not listed is a team key: valid in both environments.
        let teamKey = try SimulatorHarness(apnsEnvironment: .sandbox, apnsKeyEnvironments: ["OTHERKEY01": .production])
        #expect(try await teamKey.apns().status == 200)
        // The scope is checked after the signature: a token of another key stays InvalidProviderToken.
        let otherKey = try ES256SigningKey(
            pem: String(contentsOfFile: sandbox.credentials.serverKeyFile, encoding: .utf8))
        let forged = try SimulatorHarness.mint(issuedAt: sandbox.clock.now, keyID: "SANDBOX001", key: otherKey)
        #expect(try await teamKey.apns(jwt: forged).reason == "InvalidProviderToken")
    }

    @Test func algorithmOtherThanES256IsInvalid() async throws {
        let harness = try SimulatorHarness()
        let jwt = try JSONWebToken.encode(
            header: .object([("alg", .string("RS256")), ("kid", .string("SIMKEY0001"))]),
            claims: .object([("iss", .string("SIMTEAM001")), ("iat", .number(harness.clock.now.timeIntervalSince1970))]
            ),
            sign: SimulatorHarness.serviceAccountKey.sign)
        #expect(try await harness.apns(jwt: jwt).reason == "InvalidProviderToken")
    }

    @Test func tokenIssuedInTheFutureIsInvalid() async throws {
        let harness = try SimulatorHarness()
        let jwt = try SimulatorHarness.mint(issuedAt: harness.clock.now + 600)
        #expect(try await harness.apns(jwt: jwt).reason == "InvalidProviderToken")
    }

    @Test func tokenOlderThanAnHourIsExpired() async throws {
        let harness = try SimulatorHarness()
        let jwt = try SimulatorHarness.mint(issuedAt: harness.clock.now - 3601)
        let response = try await harness.apns(jwt: jwt)
        #expect(response.status == 403)
        #expect(response.reason == "ExpiredProviderToken")
    }

    @Test func acceptedTokenExpiresAnHourAfterItsIssue() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.apns().status == 200)
        harness.clock.advance(by: 3000)
        #expect(try await harness.apns().status == 200)
        harness.clock.advance(by: 601)
        let response = try await harness.apns()
        #expect(response.status == 403)
        #expect(response.reason == "ExpiredProviderToken")
        // A fresh token on the same connection is fine: an hour passed since the last one.
        let fresh = try SimulatorHarness.mint(issuedAt: harness.clock.now)
        #expect(try await harness.apns(jwt: fresh).status == 200)
    }

    @Test func newTokenWithinTwentyMinutesIsTooManyUpdates() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.apns().status == 200)
        let soon = try SimulatorHarness.mint(issuedAt: harness.clock.now + 60)
        let response = try await harness.apns(jwt: soon)
        #expect(response.status == 429)
        #expect(response.reason == "TooManyProviderTokenUpdates")
        // The connection keeps its token.
        #expect(try await harness.apns().status == 200)
        // Twenty minutes of issue time later a new token is welcome.
        harness.clock.advance(by: 1200)
        let later = try SimulatorHarness.mint(issuedAt: harness.clock.now)
        #expect(try await harness.apns(jwt: later).status == 200)
    }

    @Test func eachConnectionMayStartWithAnyValidToken() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.apns().status == 200)
        // A second client is a second connection: a different token is its first one.
        let other = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: harness.simulator.url, caFile: harness.credentials.caFile, connectionCount: 1))
        defer { other.shutdown() }
        let jwt = try SimulatorHarness.mint(issuedAt: harness.clock.now + 1)
        let response = try await other.send(
            HTTP2Request(
                path: "/3/device/\(SimulatorHarness.deviceToken)", headers: harness.apnsHeaders(jwt: jwt),
                body: SimulatorHarness.payload))
        #expect(response.status == 200)
    }

    @Test func withoutAKeyFileSignaturesAreNotChecked() throws {
        let verifier = ProviderTokenVerifier(key: nil, clock: TestClock())
        let otherKey = try ES256SigningKey(
            pem: String(contentsOfFile: TestCredentials.shared.serverKeyFile, encoding: .utf8))
        let jwt = try SimulatorHarness.mint(issuedAt: Date(), key: otherKey)
        #expect(verifier.check(authorization: "bearer \(jwt)", connectionID: 1) == nil)
        #expect(verifier.check(authorization: "bearer x.y.z", connectionID: 1) == .invalidProviderToken)
        #expect(verifier.check(authorization: nil, connectionID: 1) == .missingProviderToken)
    }

    @Test func bearerSchemeIsCaseInsensitive() {
        #expect(ProviderTokenVerifier.bearerToken("Bearer abc") == "abc")
        #expect(ProviderTokenVerifier.bearerToken("BEARER  abc ") == "abc")
        #expect(ProviderTokenVerifier.bearerToken("bearer ") == nil)
        #expect(ProviderTokenVerifier.bearerToken("basic abc") == nil)
    }
}
