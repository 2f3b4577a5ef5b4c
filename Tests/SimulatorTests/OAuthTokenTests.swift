import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// The OAuth2 token endpoint: service-account assertions in, access tokens out.
@Suite("OAuth2 token endpoint")
struct OAuthTokenTests {
    @Test func validAssertionGetsAnAccessToken() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.tokenRequest(assertion: try SimulatorHarness.assertion(now: harness.clock.now))
        #expect(response.status == 200)
        let json = try #require(response.json)
        #expect(json["access_token"]?.stringValue?.hasPrefix("ya29.") == true)
        #expect(json["expires_in"] == .number(3600))
        #expect(json["token_type"] == .string("Bearer"))
        #expect(harness.simulator.statistics.token[200] == 1)
    }

    struct Rejection: Sendable, CustomTestStringConvertible {
        var name: String
        var overrides: [String: JSONValue?] = [:]
        var tamper = false
        var testDescription: String { name }
    }

    static let now = Date()
    static let seconds = now.timeIntervalSince1970.rounded(.down)

    @Test(arguments: [
        Rejection(name: "bad signature", tamper: true),
        Rejection(name: "wrong audience", overrides: ["aud": .string("https://127.0.0.1:8443/other")]),
        Rejection(name: "no audience", overrides: ["aud": nil]),
        Rejection(name: "wrong issuer", overrides: ["iss": .string("someone@example.iam.gserviceaccount.com")]),
        Rejection(name: "expired", overrides: ["iat": .number(seconds - 7200), "exp": .number(seconds - 3600)]),
        Rejection(name: "lives longer than an hour", overrides: ["exp": .number(seconds + 3601)]),
        Rejection(
            name: "issued in the future", overrides: ["iat": .number(seconds + 300), "exp": .number(seconds + 900)]),
    ])
    func rejected(_ test: Rejection) async throws {
        let harness = try SimulatorHarness(clock: TestClock(Self.now))
        let assertion = try SimulatorHarness.assertion(now: Self.now, overrides: test.overrides, tamper: test.tamper)
        let response = try await harness.tokenRequest(assertion: assertion)
        #expect(response.status == 400)
        #expect(response.json?["error"] == .string("invalid_grant"))
        #expect(response.json?["error_description"]?.stringValue?.isEmpty == false)
        #expect(harness.simulator.statistics.token[400] == 1)
    }

    @Test func wrongGrantTypeIsUnsupported() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.tokenRequest(
            assertion: try SimulatorHarness.assertion(now: harness.clock.now),
            grantType: "client_credentials")
        #expect(response.status == 400)
        #expect(response.json?["error"] == .string("unsupported_grant_type"))
    }

    @Test func missingAssertionIsAnInvalidRequest() async throws {
        let harness = try SimulatorHarness()
        let response = try await harness.client.send(
            HTTP2Request(
                path: "/token", body: Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8)))
        #expect(response.status == 400)
        #expect(response.json?["error"] == .string("invalid_request"))
    }

    @Test func accessTokensExpireAfterAnHour() async throws {
        let harness = try SimulatorHarness()
        let token = try await harness.accessToken()
        let message = #"{"message":{"token":"device-1","data":{"k":"v"}}}"#
        #expect(try await harness.fcm(message: message, accessToken: token).status == 200)
        harness.clock.advance(by: 3601)
        let response = try await harness.fcm(message: message, accessToken: token)
        #expect(response.status == 401)
        #expect(response.json?["error"]?["status"] == .string("UNAUTHENTICATED"))
    }

    @Test func formDecoding() throws {
        let pairs = try #require(FormURLEncoded.parse(Array("a=1&b=x+y%2Fz&c&=e".utf8)))
        #expect(pairs.map(\.name) == ["a", "b", "c", ""])
        #expect(pairs.map(\.value) == ["1", "x y/z", "", "e"])
        #expect(FormURLEncoded.parse(Array("a=%zz".utf8)) == nil)
        #expect(FormURLEncoded.parse(Array("a=%4".utf8)) == nil)
        #expect(ServiceAccount.path(of: "https://oauth2.googleapis.com/token") == "/token")
        #expect(ServiceAccount.path(of: "https://127.0.0.1:8443/a/token?x=1") == "/a/token")
        #expect(ServiceAccount.path(of: "https://host") == nil)
    }

    /// FCM's `messages:send` documents two scopes; a token with another scope is issued (as at Google) but
    /// cannot send.
    @Test("cloud-platform is an FCM scope too; other scopes get a token FCM refuses with 403; none is invalid_scope")
    func scopes() async throws {
        let harness = try SimulatorHarness(clock: TestClock(Self.now))
        let message = #"{"message":{"token":"t"}}"#
        for (scope, status) in [
            ("https://www.googleapis.com/auth/cloud-platform", 200),
            ("openid https://www.googleapis.com/auth/firebase.messaging", 200),
            ("https://www.googleapis.com/auth/userinfo.email", 403),
        ] {
            let assertion = try SimulatorHarness.assertion(now: Self.now, overrides: ["scope": .string(scope)])
            let response = try await harness.tokenRequest(assertion: assertion)
            #expect(response.status == 200, "\(scope)")
            let token = try #require(response.json?["access_token"]?.stringValue)
            let sent = try await harness.fcm(message: message, accessToken: token)
            #expect(sent.status == status, "\(scope)")
            if status == 403 {
                #expect(sent.json?["error"]?["status"] == .string("PERMISSION_DENIED"))
                #expect(sent.json?["error"]?["message"] == .string("Request had insufficient authentication scopes."))
            }
        }
        for scope: JSONValue? in [nil, .string("")] {
            let assertion = try SimulatorHarness.assertion(now: Self.now, overrides: ["scope": scope])
            let response = try await harness.tokenRequest(assertion: assertion)
            #expect(response.status == 400)
            #expect(response.json?["error"] == .string("invalid_scope"))
        }
    }
}
