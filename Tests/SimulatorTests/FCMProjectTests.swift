import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// Firebase projects: several service accounts, each sending under its own project only, and registration tokens
/// that belong to one project (403 SENDER_ID_MISMATCH under another), over real HTTP/2.
@Suite("FCM projects")
struct FCMProjectTests {
    static let project = "herald-sim"
    static let otherProject = "herald-sim-other"
    static let message = #"{"message":{"token":"fcm-token-1","data":{"k":"v"}}}"#
    /// FCM's answer to a token of another project, byte for byte as Google sends it.
    static let senderIDMismatchBody =
        #"{"error":{"code":403,"message":"SenderId mismatch","status":"#
        + #""PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","#
        + #""errorCode":"SENDER_ID_MISMATCH"}]}}"#

    static func body(_ response: HTTP2Response) -> String { String(decoding: response.body, as: UTF8.self) }

    static func expectSenderIDMismatch(_ response: HTTP2Response, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 403, sourceLocation: sourceLocation)
        #expect(body(response) == senderIDMismatchBody, sourceLocation: sourceLocation)
        #expect(
            response.headers.first { $0.name == "content-type" }?.value == "application/json; charset=UTF-8",
            sourceLocation: sourceLocation)
    }

    static func expectPermissionDenied(
        _ response: HTTP2Response, project: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == 403, sourceLocation: sourceLocation)
        let error = response.json?["error"]
        #expect(error?["status"] == .string("PERMISSION_DENIED"), sourceLocation: sourceLocation)
        #expect(
            error?["details"] == nil, "Google's front end answers without an FcmError detail",
            sourceLocation: sourceLocation)
        #expect(error?["message"]?.stringValue?.contains("projects/\(project)") == true, sourceLocation: sourceLocation)
    }

    // MARK: Service accounts

    @Test func twoAccountsEachGetAnAccessTokenForTheirOwnProject() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both)
        #expect(harness.simulator.fcmProjectIDs == [Self.project, Self.otherProject])
        #expect(harness.simulator.fcmProjectID == Self.project)
        #expect(harness.simulator.tokenPaths == ["/token"])
        let first = try await harness.accessToken()
        let other = try await harness.accessToken(other: true)
        #expect(first != other)
        #expect(harness.simulator.statistics.token[200] == 2)

        #expect(try await harness.fcm(message: Self.message, project: Self.project, accessToken: first).status == 200)
        let sent = try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: other)
        #expect(sent.status == 200)
        #expect(sent.json?["name"]?.stringValue?.hasPrefix("projects/\(Self.otherProject)/messages/") == true)

        // Each account's token under the other's project: Google's front end refuses it.
        Self.expectPermissionDenied(
            try await harness.fcm(
                message: Self.message, project: Self.otherProject,
                accessToken: first), project: Self.otherProject)
        Self.expectPermissionDenied(
            try await harness.fcm(
                message: Self.message, project: Self.project,
                accessToken: other), project: Self.project)
        #expect(harness.simulator.received().map(\.status) == [200, 200, 403, 403])
        #expect(harness.simulator.received().last?.reason == "PERMISSION_DENIED")
    }

    @Test("an assertion is checked against the account its iss names: key, then audience")
    func assertionsAreCheckedAgainstTheirOwnAccount() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both)
        let now = harness.clock.now
        // The other account's email, signed with the first account's key.
        let forged = try SimulatorHarness.assertion(
            now: now, overrides: ["iss": .string(SimulatorHarness.otherClientEmail)])
        let refused = try await harness.tokenRequest(assertion: forged)
        #expect(refused.status == 400)
        #expect(refused.json?["error"] == .string("invalid_grant"))
        #expect(refused.json?["error_description"] == .string("Invalid JWT Signature."))
        // An account the simulator does not know.
        let stranger = try SimulatorHarness.assertion(
            now: now, overrides: ["iss": .string("someone@elsewhere.iam.gserviceaccount.com")], other: true)
        #expect(try await harness.tokenRequest(assertion: stranger).json?["error"] == .string("invalid_grant"))
        // Only the first account known: the other one's assertion is a stranger's.
        let single = try SimulatorHarness()
        let response = try await single.tokenRequest(assertion: try SimulatorHarness.assertion(now: now, other: true))
        #expect(response.status == 400)
        #expect(response.json?["error_description"] == .string("Invalid email or User ID"))
    }

    @Test("accounts with different token_uri paths are each served at their own")
    func differentTokenPathsAreServedEach() async throws {
        let credentials = TestCredentials.shared
        let otherFile = try credentials.fcmCredentialsFile(tokenURI: "https://127.0.0.1:8443/other/token", other: true)
        let simulator = try Simulator(
            configuration: SimulatorConfiguration(
                tlsCertificateFile: credentials.serverCertificateFile, tlsKeyFile: credentials.serverKeyFile,
                fcmCredentialsFile: credentials.fcmCredentialsFile, fcmAdditionalCredentialsFiles: [otherFile]))
        #expect(simulator.tokenPath == "/token")
        #expect(simulator.tokenPaths == ["/token", "/other/token"])
        try simulator.start()
        defer { simulator.stop() }
        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: simulator.url, caFile: credentials.caFile, connectionCount: 1))
        defer { client.shutdown() }
        func exchange(_ assertion: String, at path: String) async throws -> HTTP2Response {
            try await client.send(
                HTTP2Request(
                    path: path, headers: [HTTP2Header("content-type", "application/x-www-form-urlencoded")],
                    body: Array(
                        ("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
                            + "&assertion=\(assertion)").utf8)))
        }
        let now = Date()
        let other = try SimulatorHarness.assertion(
            now: now, overrides: ["aud": .string("https://127.0.0.1:8443/other/token")], other: true)
        #expect(try await exchange(other, at: "/other/token").status == 200)
        #expect(try await exchange(try SimulatorHarness.assertion(now: now), at: "/token").status == 200)
        // The other account's assertion must name its own token_uri.
        let wrongAudience = try await exchange(
            try SimulatorHarness.assertion(now: now, other: true),
            at: "/other/token")
        #expect(wrongAudience.status == 400)
        #expect(wrongAudience.json?["error_description"]?.stringValue?.contains("/other/token") == true)
    }

    @Test func configurationsThatCannotWorkAreRefused() throws {
        let credentials = TestCredentials.shared
        let duplicate = #expect(throws: SimulatorError.self) {
            try Simulator(
                configuration: SimulatorConfiguration(
                    fcmCredentialsFile: credentials.fcmCredentialsFile,
                    fcmAdditionalCredentialsFiles: [credentials.fcmCredentialsFile]))
        }
        #expect(duplicate?.code == .invalidServiceAccount)
        #expect(duplicate?.message.contains(credentials.fcmClientEmail) == true)
        let withoutFirst = #expect(throws: SimulatorError.self) {
            try Simulator(
                configuration: SimulatorConfiguration(
                    fcmAdditionalCredentialsFiles: [credentials.fcmOtherCredentialsFile]))
        }
        #expect(withoutFirst?.message.contains("fcmAdditionalCredentialsFiles needs fcmCredentialsFile") == true)
        for project in ["", "a b", "p/q", String(repeating: "p", count: 129)] {
            #expect(throws: SimulatorError.self, "\(project)") {
                try Simulator(configuration: SimulatorConfiguration(fcmTokenProject: project))
            }
        }
        #expect(throws: SimulatorError.self) {
            try Simulator(
                configuration: SimulatorConfiguration(
                    fcmCredentialsFile: credentials.fcmCredentialsFile,
                    fcmAdditionalCredentialsFiles: ["/nonexistent.json"]))
        }
    }

    // MARK: Tokens of a project

    @Test("with --fcm-token-project, a token sent under another project is 403 SENDER_ID_MISMATCH, byte for byte")
    func tokenOfAnotherProjectIsSenderIDMismatch() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both, fcmTokenProject: Self.project)
        let other = try await harness.accessToken(other: true)
        let response = try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: other)
        Self.expectSenderIDMismatch(response)
        let record = try #require(harness.simulator.received().last)
        #expect(record.service == .fcm)
        #expect(record.token == "fcm-token-1")
        #expect(record.status == 403)
        #expect(record.reason == "SENDER_ID_MISMATCH")
        #expect(record.id == nil)
        #expect(harness.simulator.statistics.fcm[403] == 1)
        let (_, listed) = try await harness.control("GET", "/sim/received?service=fcm")
        #expect(listed.arrayValue?.last?["reason"] == .string("SENDER_ID_MISMATCH"))

        // A body the fast path leaves to the full validator, and validate_only: the same answer.
        let escaped = #"{"message":{"token":"fcm-token-1","data":{"k":"\u0041"}}}"#
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: escaped, project: Self.otherProject,
                accessToken: other))
        let validateOnly = #"{"validate_only":true,"message":{"token":"fcm-token-1"}}"#
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: validateOnly, project: Self.otherProject,
                accessToken: other))
        // Topics and conditions belong to no app, so to no project.
        #expect(
            try await harness.fcm(
                message: #"{"message":{"topic":"news"}}"#, project: Self.otherProject,
                accessToken: other
            ).status == 200)
        // The token's own project sends.
        let first = try await harness.accessToken()
        #expect(try await harness.fcm(message: Self.message, project: Self.project, accessToken: first).status == 200)
        // Every other check comes first: a bad message is still 400, an unknown access token 401.
        let bad = try await harness.fcm(
            message: #"{"message":{"token":"fcm-token-1","data":{"n":1}}}"#,
            project: Self.otherProject, accessToken: other)
        #expect(bad.status == 400)
        #expect(
            try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: "ya29.unknown")
                .status == 401)
    }

    @Test("PUT /sim/tokens/{token} {\"fcmProject\"} overrides the default; DELETE falls back to it")
    func perTokenBindingOverridesTheDefault() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both, fcmTokenProject: Self.project)
        let first = try await harness.accessToken()
        let other = try await harness.accessToken(other: true)
        let token = "dXNlcjE:APA91b-Other_Project"
        let message = #"{"message":{"token":"\#(token)"}}"#
        let (status, json) = try await harness.control(
            "PUT", "/sim/tokens/\(token)",
            body: #"{"fcmProject":"herald-sim-other"}"#)
        #expect(status == 200)
        #expect(json == .object([("token", .string(token)), ("fcmProject", .string(Self.otherProject))]))

        Self.expectSenderIDMismatch(try await harness.fcm(message: message, project: Self.project, accessToken: first))
        #expect(try await harness.fcm(message: message, project: Self.otherProject, accessToken: other).status == 200)
        // Tokens nobody bound keep the default.
        #expect(try await harness.fcm(message: Self.message, project: Self.project, accessToken: first).status == 200)
        #expect(
            try await harness.control("GET", "/sim/tokens").json
                == .object([(token, .object([("fcmProject", .string(Self.otherProject))]))]))

        // Percent-encoded in the path works the same (':' encoded).
        let encoded = token.replacingOccurrences(of: ":", with: "%3A")
        #expect(try await harness.control("DELETE", "/sim/tokens/\(encoded)").json["cleared"] == .number(1))
        #expect(try await harness.control("GET", "/sim/tokens").json == .object([]))
        #expect(try await harness.fcm(message: message, project: Self.project, accessToken: first).status == 200)
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: message, project: Self.otherProject,
                accessToken: other))
    }

    @Test("without --fcm-token-project only bound tokens have a project; DELETE /sim/tokens forgets them all")
    func bindingsWithoutADefault() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both)
        let first = try await harness.accessToken()
        let other = try await harness.accessToken(other: true)
        // Nothing bound: a token goes under either project.
        #expect(try await harness.fcm(message: Self.message, project: Self.project, accessToken: first).status == 200)
        #expect(
            try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: other)
                .status == 200)

        // One hex token bound both ways: an APNs app and an FCM project, listed together.
        let hex = SimulatorHarness.deviceToken
        _ = try await harness.control("PUT", "/sim/tokens/\(hex)", body: #"{"bundleId":"app.herald.demo"}"#)
        _ = try await harness.control("PUT", "/sim/tokens/\(hex)", body: #"{"fcmProject":"herald-sim"}"#)
        _ = try await harness.control("PUT", "/sim/tokens/fcm-token-1", body: #"{"fcmProject":"herald-sim"}"#)
        let listed = try await harness.control("GET", "/sim/tokens").json
        #expect(
            listed[hex]
                == .object([
                    ("bundleId", .string("app.herald.demo")), ("source", .string("bound")),
                    ("fcmProject", .string(Self.project)),
                ]))
        #expect(listed["fcm-token-1"] == .object([("fcmProject", .string(Self.project))]))
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: Self.message, project: Self.otherProject,
                accessToken: other))
        // An unbound token still goes anywhere.
        #expect(
            try await harness.fcm(
                message: #"{"message":{"token":"fcm-token-2"}}"#, project: Self.otherProject,
                accessToken: other
            ).status == 200)

        #expect(try await harness.control("DELETE", "/sim/tokens").json["cleared"] == .number(3))
        #expect(
            try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: other)
                .status == 200)
    }

    @Test("the in-process API binds too")
    func inProcessBinding() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both)
        let other = try await harness.accessToken(other: true)
        harness.simulator.bindToken("fcm-token-1", fcmProject: Self.project)
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: Self.message, project: Self.otherProject,
                accessToken: other))
        harness.simulator.clearTokenOwners()
        #expect(
            try await harness.fcm(message: Self.message, project: Self.otherProject, accessToken: other)
                .status == 200)
    }

    @Test("a fault applies only to a send that passes every check, so not to a SENDER_ID_MISMATCH, and is kept")
    func faultsComeAfterTheProjectCheck() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .both, fcmTokenProject: Self.project)
        harness.simulator.setFault(SimulatorFault(status: 404, reason: "UNREGISTERED", times: 1), token: "fcm-token-1")
        let other = try await harness.accessToken(other: true)
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: Self.message, project: Self.otherProject,
                accessToken: other))
        let first = try await harness.accessToken()
        let faulted = try await harness.fcm(message: Self.message, project: Self.project, accessToken: first)
        #expect(faulted.status == 404)
        #expect(faulted.reason == "UNREGISTERED")
        #expect(try await harness.fcm(message: Self.message, project: Self.project, accessToken: first).status == 200)
    }

    @Test(
        "bad FCM token bindings are 400 saying what is wrong",
        arguments: [
            ("fcm-token-1", #"{"fcmProject":""}"#, "1 to 128 bytes"),
            ("fcm-token-1", #"{"fcmProject":"a b"}"#, "is not a project id"),
            ("fcm-token-1", #"{"fcmProject":"\#(String(repeating: "p", count: 129))"}"#, "1 to 128 bytes"),
            ("fcm-token-1", #"{"fcmProject":7}"#, "fcmProject must be a string"),
            ("fcm-token-1", #"{"fcmProject":null}"#, "fcmProject must be a string"),
            ("fcm-token-1", #"{"fcmProject":"herald-sim","bundleId":"app.a"}"#, "the body must be"),
            ("fcm-token-1", #"{"project":"herald-sim"}"#, #"unknown member "project""#),
            ("fcm-token-1", "{}", "the body must be"),
            ("fcm-token-1", #"["herald-sim"]"#, "the body must be"),
            ("fcm-token-1", "herald-sim", "not JSON"),
            ("%2Ftopics%2Fnews", #"{"fcmProject":"herald-sim"}"#, "without spaces or '/'"),
            ("to%20ken", #"{"fcmProject":"herald-sim"}"#, "without spaces or '/'"),
            ("%00", #"{"fcmProject":"herald-sim"}"#, "without spaces or '/'"),
            ("fcm-token-1", #"{"bundleId":"app.a"}"#, "must be hex"),
        ])
    func badBindings(_ token: String, _ body: String, _ mentions: String) async throws {
        let harness = try SimulatorHarness()
        let (status, json) = try await harness.control("PUT", "/sim/tokens/\(token)", body: body)
        #expect(status == 400)
        let message = try #require(json["error"]?.stringValue)
        #expect(message.contains(mentions), "\(message)")
        #expect(try await harness.control("GET", "/sim/tokens").json == .object([]))
    }

    @Test func tokenPathsAndMethods() async throws {
        let harness = try SimulatorHarness()
        #expect(try await harness.control("PUT", "/sim/tokens/%zz", body: #"{"fcmProject":"p"}"#).status == 400)
        #expect(try await harness.control("GET", "/sim/tokens/fcm-token-1").status == 405)
        // Forgetting a token nothing was bound to is not an error.
        #expect(try await harness.control("DELETE", "/sim/tokens/fcm-token-1").json["cleared"] == .number(0))
    }

    // MARK: Without credentials

    @Test("without a credentials file any signed-looking assertion gets a token that sends under any project")
    func withoutCredentialsTheSimulatorIsLenient() async throws {
        let harness = try SimulatorHarness(fcmAccounts: .none)
        #expect(harness.simulator.fcmProjectID == nil)
        #expect(harness.simulator.fcmProjectIDs == [])
        #expect(harness.simulator.tokenPaths == ["/token"])
        let stranger = try SimulatorHarness.assertion(
            now: harness.clock.now, overrides: ["iss": .string("anyone@example.iam.gserviceaccount.com")], tamper: true)
        let exchanged = try await harness.tokenRequest(assertion: stranger)
        #expect(exchanged.status == 200)
        let token = try #require(exchanged.json?["access_token"]?.stringValue)
        for project in [Self.project, Self.otherProject, "anything-at-all"] {
            #expect(
                try await harness.fcm(message: Self.message, project: project, accessToken: token).status == 200,
                "\(project)")
        }
        // Tokens still get a project when told: the credentials are lenient, the tokens not.
        harness.simulator.bindToken("fcm-token-1", fcmProject: Self.project)
        Self.expectSenderIDMismatch(
            try await harness.fcm(
                message: Self.message, project: "anything-at-all",
                accessToken: token))
    }

    @Test func validation() {
        #expect(FCMTokenProjects.problem(withProject: "herald-sim") == nil)
        #expect(FCMTokenProjects.problem(withProject: "example.com:herald-sim") == nil)
        #expect(FCMTokenProjects.problem(withProject: "123456789012") == nil)
        #expect(FCMTokenProjects.problem(withProject: "") != nil)
        #expect(FCMTokenProjects.problem(withProject: "a/b") != nil)
        #expect(FCMTokenProjects.problem(withToken: "dXNlcjE:APA91b-x_y") == nil)
        #expect(FCMTokenProjects.problem(withToken: "") != nil)
        #expect(FCMTokenProjects.problem(withToken: "a b") != nil)
        #expect(FCMTokenProjects.problem(withToken: String(repeating: "t", count: 4097)) != nil)
        let projects = FCMTokenProjects()
        #expect(projects.isInactive)
        #expect(projects.admits(token: "t", project: "any"))
        projects.bound.set("p", token: "t")
        #expect(!projects.isInactive)
        #expect(!projects.admits(token: "t", project: "q"))
        #expect(projects.admits(token: "T", project: "q"), "tokens compare exactly")
        #expect(projects.bound.remove(token: "t"))
        #expect(projects.isInactive)
        let withDefault = FCMTokenProjects(defaultProject: "p")
        #expect(!withDefault.isInactive)
        #expect(withDefault.bound.removeAll() == 0)
        #expect(!withDefault.isInactive, "the default stays")
        #expect(!withDefault.admits(token: "t", project: "q"))
    }
}
