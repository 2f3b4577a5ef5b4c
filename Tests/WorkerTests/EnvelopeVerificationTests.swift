import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// The reference verifier (scripts/verify_envelope.py, the Python of docs/api.md) run on what the simulator
/// received from the intake and a worker: genuine payloads verify, v1 and v2; altered, re-addressed or late
/// ones fail v2.
@Suite(.requiresDatabase, .serialized)
struct EnvelopeVerificationTests {
    static let script = TestEnvironment.repositoryRoot.appendingPathComponent("scripts/verify_envelope.py")
    static let keys = "k1:" + Data(LiveActivityHarness.signingKey).base64EncodedString()

    /// python3 of the repository's venv, else the system's (the verifier needs only the standard library).
    static var python: URL {
        let venv = TestEnvironment.repositoryRoot.appendingPathComponent(".build/venv/bin/python3")
        return FileManager.default.isExecutableFile(atPath: venv.path) ? venv : URL(fileURLWithPath: "/usr/bin/python3")
    }

    /// The verifier's exit status and output for `payload` (JSON) sent to `user`, checked at `now`.
    static func verify(_ payload: JSONValue, user: String, now: Int) throws -> (status: Int32, output: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("envelope-\(UUID()).json")
        try Data(JSONWriter.bytes(payload)).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let arguments = [script.path, "--keys", keys, "--user", user, "--now", String(now), file.path]
        return try ChildProcess.run(python, arguments, environment: [:])
    }

    /// `payload` with the member at `path` set to `value` (an object's member, added if absent).
    static func edited(_ payload: JSONValue, _ path: [String], _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = payload, let key = path.first else { return payload }
        let next = path.count > 1 ? edited(payload[key] ?? .object([]), Array(path.dropFirst()), value) : value
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = next
        } else {
            members.append((key, next))
        }
        return .object(members)
    }

    @Test("pushes received by the simulator verify with the Python reference; altered, re-addressed or late ones fail")
    func receivedPayloadsVerify() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(extra: #","sound":"chime.caf","allowTimeSensitive":true"#)
        let user = try harness.user()
        try harness.workers.startWorker()
        let sentFrom = Int(Date().timeIntervalSince1970)
        _ = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Deposit","body":"1/6","#
                    + #""interruptionLevel":"time-sensitive","ttlSeconds":600,"data":{"txHash":"0x5e1f"}}"#), [202])
        let sentBy = Int(Date().timeIntervalSince1970) + 1
        func received(_ service: SimulatorService) -> SimulatorRecord? {
            harness.simulator.received().first { $0.service == service && $0.status == 200 }
        }
        try await harness.workers.waitUntil("the push on both phones") {
            received(.apns) != nil && received(.fcm) != nil
        }
        let apnsRecord = try #require(received(.apns))
        let fcmRecord = try #require(received(.fcm))
        let apns = try JSONParser.parse(apnsRecord.body)
        let fcm = try #require(try JSONParser.parse(fcmRecord.body)["message"]?["data"])
        let expText = try #require(apns["exp"]?.stringValue)
        let exp = try #require(Int(expText))
        let now = Int(Date().timeIntervalSince1970)
        // The TTL's end from the acceptance, however long the suite's load made the sends take.
        #expect(exp >= sentFrom + 600 && exp <= sentBy + 600, "exp \(exp), sent within \(sentFrom)...\(sentBy)")

        for (name, payload) in [("apns", apns), ("fcm", fcm)] {
            let genuine = try Self.verify(payload, user: user.id, now: now)
            #expect(genuine.status == 0 && genuine.output == "v1 ok\nv2 ok\n", "\(name): \(genuine.output)")
            let lateOutput = try Self.verify(payload, user: user.id, now: exp + 1).output
            #expect(lateOutput.contains("v2 expired"), "\(name)")
            let otherUser = try Self.verify(payload, user: user.id + "x", now: now)
            #expect(otherUser.status == 1 && otherUser.output.contains("v2 bad signature"), "\(name)")
        }
        let altered: [(String, JSONValue)] = [
            ("a subtitle added", Self.edited(apns, ["aps", "alert", "subtitle"], .string("Act now"))),
            ("the body changed", Self.edited(apns, ["aps", "alert", "body"], .string("6/6"))),
            ("the sound changed", Self.edited(apns, ["aps", "sound"], .string("default"))),
            ("a data key added", Self.edited(apns, ["extra"], .string("1"))),
            ("the FCM body changed", Self.edited(fcm, ["body"], .string("6/6"))),
            ("an FCM data key added", Self.edited(fcm, ["extra"], .string("1"))),
        ]
        for (name, payload) in altered {
            let result = try Self.verify(payload, user: user.id, now: now)
            #expect(result.status == 1 && result.output.contains("v2 bad signature"), "\(name): \(result.output)")
        }
    }
}
