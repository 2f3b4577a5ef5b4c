import Foundation
import HTTP2
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

/// The built `herald-sim`: the listening line, a request, SIGTERM, bad flags, `mint-apns-jwt`.
@Suite("herald-sim executable")
struct ExecutableTests {
    static var executable: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-sim") }
    let credentials = TestCredentials.shared

    /// Waits for the listening line and returns the port and the transport it names.
    static func waitForListening(_ child: ChildProcess) throws -> (port: Int, transport: String) {
        var listening: Substring?
        try child.waitUntilReady("herald-sim's listening line", timeout: .seconds(20)) {
            listening = child.output.split(separator: "\n").first { $0.hasPrefix("herald-sim listening on ") }
            return listening != nil
        }
        // herald-sim listening on 127.0.0.1:PORT (tls)
        let parts = listening?.split(separator: " ") ?? []
        guard parts.count == 5, let port = parts[3].split(separator: ":").last.flatMap({ Int($0) }) else {
            throw HarnessError("unexpected listening line: \(listening ?? "")")
        }
        return (port, String(parts[4].dropFirst().dropLast()))
    }

    @Test func servesOverTLSAndExitsZeroOnSIGTERM() async throws {
        let child = try ChildProcess(
            executable: Self.executable,
            arguments: [
                "--port", "0", "--tls-cert", credentials.serverCertificateFile, "--tls-key", credentials.serverKeyFile,
                "--apns-key-file", credentials.apnsKeyFile, "--fcm-credentials-file", credentials.fcmCredentialsFile,
            ], environment: ProcessInfo.processInfo.environment)
        defer { child.stop() }
        let (port, transport) = try Self.waitForListening(child)
        #expect(transport == "tls")

        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "https://127.0.0.1:\(port)", caFile: credentials.caFile, connectionCount: 1))
        defer { client.shutdown() }
        let jwt = try SimulatorHarness.mint(issuedAt: Date())
        let response = try await client.send(
            HTTP2Request(
                path: "/3/device/\(SimulatorHarness.deviceToken)",
                headers: [
                    HTTP2Header("authorization", "bearer \(jwt)"), HTTP2Header("apns-topic", "app.herald.demo"),
                    HTTP2Header("apns-push-type", "alert"),
                ],
                body: SimulatorHarness.payload))
        #expect(response.status == 200)
        let stats = try await client.send(HTTP2Request(method: "GET", path: "/sim/stats"))
        #expect(try JSONParser.parse(stats.body)["apns"]?["200"] == .number(1))

        child.process.terminate()
        child.process.waitUntilExit()
        #expect(child.process.terminationReason == .exit)
        #expect(child.process.terminationStatus == 0)
    }

    @Test func servesCleartextH2CWithoutACertificate() async throws {
        let child = try ChildProcess(
            executable: Self.executable, arguments: ["--port", "0", "--record-limit", "5"],
            environment: ProcessInfo.processInfo.environment)
        defer { child.stop() }
        let (port, transport) = try Self.waitForListening(child)
        #expect(transport == "h2c")
        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "http://127.0.0.1:\(port)",
                connectionCount: 1))
        defer { client.shutdown() }
        let response = try await client.send(HTTP2Request(method: "GET", path: "/sim/received"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "[]")
        kill(child.process.processIdentifier, SIGINT)
        child.process.waitUntilExit()
        #expect(child.process.terminationStatus == 0)
    }

    @Test("two service accounts and --fcm-token-project: the other project's send to a token is SENDER_ID_MISMATCH")
    func twoProjects() async throws {
        let child = try ChildProcess(
            executable: Self.executable,
            arguments: [
                "--port", "0", "--fcm-credentials-file", credentials.fcmCredentialsFile,
                "--fcm-credentials-file", credentials.fcmOtherCredentialsFile,
                "--fcm-token-project", credentials.fcmProjectID,
            ], environment: ProcessInfo.processInfo.environment)
        defer { child.stop() }
        let (port, _) = try Self.waitForListening(child)
        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "http://127.0.0.1:\(port)",
                connectionCount: 1))
        defer { client.shutdown() }
        var tokens: [String] = []
        for other in [false, true] {
            let form =
                "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="
                + (try SimulatorHarness.assertion(now: Date(), other: other))
            let response = try await client.send(HTTP2Request(path: "/token", body: Array(form.utf8)))
            tokens.append(try #require(try JSONParser.parse(response.body)["access_token"]?.stringValue))
        }
        func send(project: String, accessToken: String) async throws -> HTTP2Response {
            try await client.send(
                HTTP2Request(
                    path: "/v1/projects/\(project)/messages:send",
                    headers: [HTTP2Header("authorization", "Bearer \(accessToken)")],
                    body: Array(#"{"message":{"token":"fcm-token-1"}}"#.utf8)))
        }
        #expect(try await send(project: credentials.fcmProjectID, accessToken: tokens[0]).status == 200)
        let mismatch = try await send(project: credentials.fcmOtherProjectID, accessToken: tokens[1])
        #expect(mismatch.status == 403)
        #expect(
            try JSONParser.parse(mismatch.body)["error"]?["details"]?.arrayValue?.first?["errorCode"]
                == .string("SENDER_ID_MISMATCH"))
    }

    @Test("--channel-port: a channel management line before the listening line; its channels take broadcasts")
    func servesChannelManagement() async throws {
        let child = try ChildProcess(
            executable: Self.executable,
            arguments: [
                "--port", "0", "--channel-port", "0", "--channel-limit", "1",
                "--tls-cert", credentials.serverCertificateFile, "--tls-key", credentials.serverKeyFile,
                "--apns-key-file", credentials.apnsKeyFile,
            ], environment: ProcessInfo.processInfo.environment)
        defer { child.stop() }
        let (port, _) = try Self.waitForListening(child)
        let line = try #require(
            child.output.split(separator: "\n").first {
                $0.hasPrefix("herald-sim channel management on ")
            })
        // herald-sim channel management on 127.0.0.1:PORT (tls)
        let channelPort = try #require(line.split(separator: " ")[4].split(separator: ":").last.flatMap { Int($0) })
        #expect(channelPort != port)
        #expect(line.hasSuffix("(tls)"))

        let jwt = try SimulatorHarness.mint(issuedAt: Date())
        let management = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "https://127.0.0.1:\(channelPort)", caFile: credentials.caFile, connectionCount: 1))
        defer { management.shutdown() }
        let body = Array(SimulatorHarness.createBody.utf8)
        let authorization = [HTTP2Header("authorization", "bearer \(jwt)")]
        let path = "/1/apps/app.herald.demo/channels"
        let created = try await management.send(HTTP2Request(path: path, headers: authorization, body: body))
        #expect(created.status == 201)
        let channel = try #require(created.header("apns-channel-id"))
        let second = try await management.send(HTTP2Request(path: path, headers: authorization, body: body))
        #expect(second.reason == "CannotCreateChannelConfig")

        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "https://127.0.0.1:\(port)", caFile: credentials.caFile, connectionCount: 1))
        defer { client.shutdown() }
        let broadcast = try await client.send(
            HTTP2Request(
                path: "/4/broadcasts/apps/app.herald.demo",
                headers: [
                    HTTP2Header("authorization", "bearer \(jwt)"), HTTP2Header("apns-push-type", "liveactivity"),
                    HTTP2Header("apns-channel-id", channel),
                ],
                body: BroadcastTests.update))
        #expect(broadcast.status == 200)
    }

    @Test("--latency-ms: APNs answers wait, the control API does not")
    func servesWithLatency() async throws {
        let child = try ChildProcess(
            executable: Self.executable, arguments: ["--port", "0", "--latency-ms", "1000,50"],
            environment: ProcessInfo.processInfo.environment)
        defer { child.stop() }
        let (port, _) = try Self.waitForListening(child)
        let client = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "http://127.0.0.1:\(port)",
                connectionCount: 1))
        defer { client.shutdown() }
        #expect(try await client.send(HTTP2Request(method: "GET", path: "/sim/stats")).status == 200)
        // Both at once on one connection, the push first: the control API's answer comes first however loaded the
        // machine (it would have to reach the simulator a whole second after the push), the push's no sooner than
        // the latency. Stamped on the client's loop thread (LatencyTests.sendTogether).
        let push = HTTP2Request(
            path: "/3/device/\(SimulatorHarness.deviceToken)",
            headers: [
                HTTP2Header("authorization", "bearer \(try SimulatorHarness.mint(issuedAt: Date()))"),
                HTTP2Header("apns-topic", "app.herald.demo"),
            ],
            body: SimulatorHarness.payload)
        let control = HTTP2Request(method: "GET", path: "/sim/received")
        let answers = await LatencyTests.sendTogether(client, [push, control])
        let (pushAnswer, controlAnswer) = (answers.results[0], answers.results[1])
        #expect(pushAnswer.status == 200)
        #expect(controlAnswer.status == 200)
        #expect(controlAnswer.at < pushAnswer.at)
        #expect(pushAnswer.at - answers.start >= .milliseconds(1000))
    }

    @Test(arguments: [
        ["--colour", "red"], ["--port", "abc"], ["--tls-cert", "only.pem"], ["--latency-ms", "5,x"],
    ])
    func badFlagsExitTwo(_ arguments: [String]) throws {
        let result = try ChildProcess.run(Self.executable, arguments, environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 2)
        #expect(result.output.contains("herald-sim:"))
        #expect(result.output.contains("usage:"))
    }

    @Test func unreadableKeyFileExitsOne() throws {
        let result = try ChildProcess.run(
            Self.executable, ["--port", "0", "--apns-key-file", "/nonexistent.p8"],
            environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 1)
        #expect(result.output.contains("/nonexistent.p8"))
    }

    @Test func mintsAProviderTokenTheSimulatorAccepts() throws {
        let result = try ChildProcess.run(
            Self.executable,
            [
                "mint-apns-jwt", "--apns-key-file", credentials.apnsKeyFile, "--key-id", "SIMKEY0001", "--team-id",
                "SIMTEAM001",
            ], environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0)
        let token = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let jwt = try #require(JSONWebToken.decode(token))
        #expect(jwt.header["kid"] == .string("SIMKEY0001"))
        #expect(jwt.claims["iss"] == .string("SIMTEAM001"))
        let iat = try #require(jwt.claims["iat"]?.numberValue)
        #expect(abs(iat - Date().timeIntervalSince1970) < 60)
        #expect(SimulatorHarness.apnsKey.verifyingKey.isValidSignature(jwt.signature, for: jwt.signingInput))
    }
}
