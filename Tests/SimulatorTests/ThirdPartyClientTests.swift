import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

/// A real third-party APNs client as the judge: aioapns 4.0 from PyPI (installed by `scripts/setup`
/// into `.build/venv`), unmodified but for the address it connects to, sends through `bench/aioapns_send.py` to
/// a running `herald-sim` over TLS without ALPN, with the simulator's CA trusted and the same .p8 key the
/// simulator checks provider tokens against.
@Suite("aioapns against herald-sim")
struct ThirdPartyClientTests {
    static let python = TestEnvironment.repositoryRoot.appendingPathComponent(".build/venv/bin/python")
    static let script = TestEnvironment.repositoryRoot.appendingPathComponent("bench/aioapns_send.py")
    static let tokens = (1...4).map { String(repeating: String(format: "%02x", $0 * 17), count: 32) }
    let credentials = TestCredentials.shared

    /// A running herald-sim over TLS that lets the team push to `app.herald.demo` only.
    final class RunningSimulator: Sendable {
        let child: ChildProcess
        let port: Int
        let client: HTTP2Client

        init(credentials: TestCredentials) throws {
            child = try ChildProcess(
                executable: ExecutableTests.executable,
                arguments: [
                    "--port", "0", "--tls-cert", credentials.serverCertificateFile, "--tls-key",
                    credentials.serverKeyFile,
                    "--apns-key-file", credentials.apnsKeyFile, "--apns-topics", credentials.apnsTopic,
                ], environment: ProcessInfo.processInfo.environment)
            port = try ExecutableTests.waitForListening(child).port
            client = try HTTP2Client(
                configuration: HTTP2ClientConfiguration(
                    url: "https://127.0.0.1:\(port)", caFile: credentials.caFile, connectionCount: 1))
        }

        deinit {
            client.shutdown()
            child.stop()
        }

        func control(_ method: String, _ path: String, body: String = "") async throws -> JSONValue {
            let response = try await client.send(HTTP2Request(method: method, path: path, body: Array(body.utf8)))
            guard response.status == 200 else {
                throw HarnessError(
                    "\(method) \(path): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
            }
            return try JSONParser.parse(response.body)
        }
    }

    /// Runs the aioapns script and returns its JSON report.
    func aioapns(
        port: Int, count: Int, concurrency: Int = 4, tokens: [String] = tokens, topic: String? = nil,
        keyFile: String? = nil, extra: [String] = []
    ) throws -> JSONValue {
        guard FileManager.default.isExecutableFile(atPath: Self.python.path) else {
            throw HarnessError("\(Self.python.path) is missing: run scripts/setup (scripts/test does)")
        }
        let arguments =
            [
                Self.script.path, "--host", "127.0.0.1", "--port", String(port), "--ca-file", credentials.caFile,
                "--key-file", keyFile ?? credentials.apnsKeyFile, "--key-id", credentials.apnsKeyID,
                "--team-id", credentials.apnsTeamID, "--topic", topic ?? credentials.apnsTopic, "--count",
                String(count),
                "--concurrency", String(concurrency), "--tokens", tokens.joined(separator: ","), "--details",
                "--allow-failures",
            ] + extra
        let result = try ChildProcess.run(Self.python, arguments, environment: ProcessInfo.processInfo.environment)
        // stdout and stderr share the file: the report is the one line that is a JSON object.
        guard result.status == 0,
            let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix(#"{"client""#) })
        else { throw HarnessError("aioapns_send.py exited \(result.status): \(result.output)") }
        return try JSONParser.parse(Array(line.utf8))
    }

    @Test("aioapns gets 200s, and the simulator recorded exactly what it sent")
    func aioapnsIsAccepted() async throws {
        let simulator = try RunningSimulator(credentials: credentials)
        // As aioapns users send: every option it has, then only what it sends by default (no push type,
        // priority, expiration or collapse id).
        let full = try aioapns(
            port: simulator.port, count: 24,
            extra: [
                "--push-type", "alert", "--priority", "10", "--ttl", "3600", "--collapse-id", "herald",
            ])
        let minimal = try aioapns(port: simulator.port, count: 8, concurrency: 8, extra: ["--push-type", "none"])
        for report in [full, minimal] {
            #expect(report["failed"] == .number(0), "\(report)")
            #expect(report["statuses"] == .object([("200", .number(report["sent"]?.numberValue ?? -1))]))
        }
        #expect(full["sent"] == .number(24))
        #expect(minimal["sent"] == .number(8))

        let sent = (full["results"]?.arrayValue ?? []) + (minimal["results"]?.arrayValue ?? [])
        let received = try #require(try await simulator.control("GET", "/sim/received").arrayValue)
        #expect(received.count == sent.count)
        // Each request aioapns sent is recorded once, under its apns-id, with its token and payload.
        let byID = Dictionary(
            received.map { ($0["headers"]?["apns-id"]?.stringValue ?? "", $0) },
            uniquingKeysWith: { first, _ in first })
        #expect(byID.count == sent.count)
        for result in sent {
            let id = try #require(result["id"]?.stringValue)
            let record = try #require(byID[id], "no record of \(id)")
            #expect(record["status"] == .number(200))
            #expect(record["token"] == result["token"])
            #expect(record["service"] == .string("apns"))
            #expect(record["headers"]?["apns-topic"] == .string(credentials.apnsTopic))
            #expect(record["headers"]?["authorization"] == .string("<redacted>"))
            #expect(record["payload"]?["aps"]?["alert"]?["title"] == .string("aioapns"))
        }
        let fullIDs = Set((full["results"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        for record in received {
            let headers = record["headers"]
            if fullIDs.contains(headers?["apns-id"]?.stringValue ?? "") {
                #expect(headers?["apns-push-type"] == .string("alert"))
                #expect(headers?["apns-priority"] == .string("10"))
                #expect(headers?["apns-collapse-id"] == .string("herald"))
                #expect(headers?["apns-expiration"]?.stringValue.flatMap { Int($0) } != nil)
            } else {
                #expect(headers?["apns-push-type"] == nil)
                #expect(headers?["apns-priority"] == nil)
            }
        }
        let stats = try await simulator.control("GET", "/sim/stats")
        #expect(stats["apns"]?["200"] == .number(Double(sent.count)))
    }

    @Test("aioapns reports Apple's reasons: injected faults, a bad provider token, a topic the team does not own")
    func aioapnsSeesApplesReasons() async throws {
        let simulator = try RunningSimulator(credentials: credentials)
        let gone = Self.tokens[0]
        let throttled = Self.tokens[1]
        _ = try await simulator.control("PUT", "/sim/faults/\(gone)", body: #"{"status":410,"reason":"Unregistered"}"#)
        _ = try await simulator.control(
            "PUT", "/sim/faults/\(throttled)",
            body: #"{"status":429,"reason":"TooManyRequests","retryAfter":1}"#)
        let faulted = try aioapns(port: simulator.port, count: 6, tokens: [gone, throttled, Self.tokens[2]])
        var outcomes: [String: (status: Double?, reason: String?)] = [:]
        for result in faulted["results"]?.arrayValue ?? [] {
            outcomes[result["token"]?.stringValue ?? ""] = (
                result["status"]?.numberValue, result["reason"]?.stringValue
            )
        }
        #expect(outcomes[gone]?.status == 410)
        #expect(outcomes[gone]?.reason == "Unregistered")
        #expect(outcomes[throttled]?.status == 429)
        #expect(outcomes[throttled]?.reason == "TooManyRequests")
        #expect(outcomes[Self.tokens[2]]?.status == 200)
        #expect(faulted["sent"] == .number(2))
        #expect(faulted["failed"] == .number(4))

        // Tokens signed with a key the simulator does not know: 403 InvalidProviderToken.
        let otherKey = credentials.directory.appendingPathComponent("other-\(UUID().uuidString).p8").path
        let made = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/openssl"),
            [
                "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", otherKey,
            ], environment: ProcessInfo.processInfo.environment)
        #expect(made.status == 0, "\(made.output)")
        let badKey = try aioapns(port: simulator.port, count: 1, tokens: [Self.tokens[3]], keyFile: otherKey)
        #expect(badKey["statuses"] == .object([("403", .number(1))]))
        #expect(badKey["reasons"] == .object([("InvalidProviderToken", .number(1))]), "\(badKey)")

        // Another team's app: 400 TopicDisallowed.
        let otherApp = try aioapns(port: simulator.port, count: 1, tokens: [Self.tokens[3]], topic: "com.example.other")
        #expect(otherApp["reasons"] == .object([("TopicDisallowed", .number(1))]), "\(otherApp)")

        // What aioapns was told is what the simulator recorded.
        let received = try #require(try await simulator.control("GET", "/sim/received").arrayValue)
        #expect(received.count == 8)
        #expect(
            received.filter { $0["token"]?.stringValue == gone }.allSatisfy { $0["reason"] == .string("Unregistered") })
        #expect(received.compactMap { $0["reason"]?.stringValue }.filter { $0 == "TopicDisallowed" }.count == 1)
    }

    @Test("aioapns' Live Activity push (PushType.LIVEACTIVITY) is accepted and recorded; a broken one is PayloadEmpty")
    func aioapnsLiveActivity() async throws {
        let simulator = try RunningSimulator(credentials: credentials)
        let topic = credentials.apnsTopic + ".push-type.liveactivity"
        let startToken = String(repeating: "5a", count: 80)
        let start = String(decoding: LiveActivityPayloads.body(LiveActivityPayloads.start), as: UTF8.self)
        let sent = try aioapns(
            port: simulator.port, count: 3, concurrency: 1, tokens: [startToken], topic: topic,
            extra: ["--push-type", "liveactivity", "--priority", "10", "--message", start])
        #expect(sent["sent"] == .number(3), "\(sent)")
        #expect(sent["statuses"] == .object([("200", .number(3))]))

        let received = try #require(try await simulator.control("GET", "/sim/received?token=\(startToken)").arrayValue)
        #expect(received.count == 3)
        let expected = try JSONParser.parse(LiveActivityPayloads.body(LiveActivityPayloads.start))
        for record in received {
            #expect(record["status"] == .number(200))
            #expect(record["headers"]?["apns-push-type"] == .string("liveactivity"))
            #expect(record["headers"]?["apns-topic"] == .string(topic))
            #expect(record["headers"]?["apns-priority"] == .string("10"))
            // aioapns re-serialises the message: the same document, in its own spelling.
            #expect(record["payload"] == expected)
        }

        // The same client, a start without its alert: Apple's shape of refusal, as aioapns reports it.
        let broken = String(
            decoding: LiveActivityPayloads.body(
                LiveActivityPayloads.without(
                    LiveActivityPayloads.start,
                    "alert")), as: UTF8.self)
        let refused = try aioapns(
            port: simulator.port, count: 1, tokens: [startToken], topic: topic,
            extra: ["--push-type", "liveactivity", "--priority", "10", "--message", broken])
        #expect(refused["statuses"] == .object([("400", .number(1))]), "\(refused)")
        #expect(refused["reasons"] == .object([("PayloadEmpty", .number(1))]), "\(refused)")
        let last = try #require(try await simulator.control("GET", "/sim/received").arrayValue?.last)
        #expect(last["detail"] == .string("aps.alert is required on start"))
    }

    @Test("aioapns' background push (PushType.BACKGROUND) at priority 5 is accepted, at 10 it is BadPriority")
    func aioapnsBackground() async throws {
        let simulator = try RunningSimulator(credentials: credentials)
        let token = String(repeating: "6b", count: 32)
        // Herald's retract message, as RetractMessage renders it (signatures aside: the simulator checks none).
        let rendered = RetractMessage.render(
            retracting: UUID(), miniAppID: "com.acme.pay", recipient: "u1", expiresAt: 2_000_000_000, for: .apns,
            signer: FixedSigner())
        let message = String(decoding: rendered, as: UTF8.self)
        let sent = try aioapns(
            port: simulator.port, count: 2, concurrency: 1, tokens: [token],
            extra: ["--push-type", "background", "--priority", "5", "--message", message])
        #expect(sent["statuses"] == .object([("200", .number(2))]), "\(sent)")
        let received = try #require(try await simulator.control("GET", "/sim/received?token=\(token)").arrayValue)
        #expect(received.count == 2)
        for record in received {
            #expect(record["headers"]?["apns-push-type"] == .string("background"))
            #expect(record["headers"]?["apns-priority"] == .string("5"))
            #expect(record["payload"] == (try JSONParser.parse(rendered)))
        }

        let refused = try aioapns(
            port: simulator.port, count: 1, tokens: [token],
            extra: ["--push-type", "background", "--priority", "10", "--message", message])
        #expect(refused["statuses"] == .object([("400", .number(1))]), "\(refused)")
        #expect(refused["reasons"] == .object([("BadPriority", .number(1))]), "\(refused)")
    }
}

/// A signer with a constant signature: the simulator verifies no payload signature.
private struct FixedSigner: PayloadSigner {
    var keyID: String { "k1" }
    func signature(for message: [UInt8]) -> String { String(repeating: "A", count: 43) }
}
