import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import ServiceSupport
import Testing

@testable import Intake

#if canImport(Glibc)
    import Glibc
#endif

/// The intake against hostile clients (docs/security.md): truncated paths in every route family, waits that
/// must not hold handler threads, bounded metric labels, 405 with Allow, and the token rules.
@Suite("Intake against hostile clients", .requiresDatabase) struct HostileClientIntakeTests {
    /// Each id-carrying route, with a NUL slipped in escaped and raw: 400 invalid_path, and the row the
    /// truncated id names is untouched.
    @Test("A NUL in a path id is 400 in every route family and nothing is written", arguments: ["%00x", "\u{0}x"])
    func nulInPathIdsWritesNothing(suffix: String) throws {
        let intake = IntakeHarness.shared
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let devices = try DB.count("SELECT count(*) FROM devices WHERE user_id = $1", [user.id])

        // Host: replacing, deleting, touching what the truncated id names.
        let replace = try intake.host(
            "PUT", "/api/internal/users/\(user.id)\(suffix)",
            #"{"tenantId":"other-tenant","emails":[],"wallets":[]}"#)
        #expect(replace.status == 400)
        #expect(replace.errorCode == "invalid_path")
        #expect(
            try DB.rows("SELECT tenant_id FROM users WHERE id = $1", [user.id]).first?.string(0) == partner.tenantID)
        #expect(try DB.count("SELECT count(*) FROM user_emails WHERE user_id = $1", [user.id]) == 1)
        #expect(try intake.host("DELETE", "/api/internal/users/\(user.id)/devices/iphone\(suffix)").status == 400)
        #expect(try DB.count("SELECT count(*) FROM devices WHERE user_id = $1", [user.id]) == devices)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(user.id)/opt-outs/\(partner.miniAppID)\(suffix)").status
                == 400)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(user.id)/mini-app-sessions/\(partner.miniAppID)\(suffix)")
                .status == 400)
        #expect(try DB.count("SELECT count(*) FROM opt_outs WHERE user_id = $1", [user.id]) == 0)
        #expect(try DB.count("SELECT count(*) FROM mini_app_sessions WHERE user_id = $1", [user.id]) == 0)

        // Admin: an update or revocation of the partner the truncated id names.
        let patch = try intake.admin(
            "PATCH", "/api/admin/mini-app-partners/\(partner.id)\(suffix)", #"{"displayName":"Hijacked"}"#)
        #expect(patch.status == 400)
        #expect(patch.errorCode == "invalid_path")
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)\(suffix)").status == 400)
        #expect(
            try intake.admin("POST", "/api/admin/mini-app-partners/\(partner.id)\(suffix)/rotate-key").status == 400)
        let stored = try DB.rows(
            "SELECT display_name, revoked_at IS NULL FROM partners WHERE id = $1::uuid", [partner.id])
        #expect(try stored.first?.string(0) == partner.displayName)
        #expect(try stored.first?.string(1) == "t")

        // Partner: a push on a truncated route, a status lookup.
        let push = try intake.request(
            "POST", "/api/partners/notifications/push\(suffix)", token: partner.key,
            json: pushBody(partner, emails: [user.email]))
        #expect(push.status == 400)
        #expect(try DB.writes(partnerID: partner.id) == 0)
        #expect(
            try intake.request("GET", "/api/partners/notifications/push/\(UUID())\(suffix)", token: partner.key).status
                == 400)
    }

    @Test("Path ids the id rules do not allow are 400 naming the parameter")
    func invalidPathIdsAre400() throws {
        let intake = IntakeHarness.shared
        let partner = try intake.makePartner()
        let response = try intake.admin("PATCH", "/api/admin/mini-app-partners/not-a-uuid", #"{"displayName":"X"}"#)
        #expect(response.status == 400)
        #expect(response.json["error"]?["field"]?.stringValue == "id")
        let status = try intake.request("GET", "/api/partners/notifications/push/not-a-uuid", token: partner.key)
        #expect(status.status == 400)
        #expect(status.json["error"]?["field"]?.stringValue == "requestId")
        let host = try intake.host("PUT", "/api/internal/users/a%20b", #"{"tenantId":"t","emails":[],"wallets":[]}"#)
        #expect(host.status == 400)
        #expect(host.json["error"]?["field"]?.stringValue == "userId")
    }

    @Test("405 carries Allow with the path's methods")
    func methodNotAllowedCarriesAllow() throws {
        let response = try IntakeHarness.shared.admin("PUT", "/api/admin/mini-app-partners")
        #expect(response.status == 405)
        #expect(response.headers["allow"] == "POST, GET, HEAD")
        #expect(response.errorCode == "method_not_allowed")
    }

    @Test("a literal segment outranks a parameter: GET on the channels' path is 405, not an activity named channels")
    func literalPathOutranksAParameter() throws {
        for method in ["GET", "PATCH", "DELETE"] {
            let response = try IntakeHarness.shared.admin(method, "/api/partners/live-activities/channels")
            #expect(response.status == 405, "\(method)")
            #expect(response.headers["allow"] == "POST", "\(method)")
        }
    }

    @Test("Unknown methods and routes are counted as other; a refusal by libmicrohttpd is JSON and counted")
    func metricLabelsAreBounded() throws {
        let intake = try IntakeHarness()
        defer { intake.stop() }
        let method = "BREW" + String(Int.random(in: 1000...9999))
        let route = "/coffee-" + TestEnvironment.unique("pot")
        _ = try TestHTTPClient.send(port: intake.port, method: method, path: route)
        _ = try TestHTTPClient.send(port: intake.port, method: "GET", path: route)
        let refused = try rawExchange(port: intake.port, "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(refused.hasPrefix("HTTP/1.1 505"))
        #expect(refused.contains(#""code":"http_version_not_supported""#))
        let metrics = try intake.scrapeMetrics().text
        #expect(!metrics.contains(method))
        #expect(!metrics.contains(route))
        #expect(metrics.contains(#"route="other",method="other",status="404""#))
        #expect(metrics.contains(#"route="other",method="GET",status="404""#))
        #expect(metrics.contains(#"route="other",method="other",status="505""#))
    }

    /// The deployed executable: libmicrohttpd's own refusals are replaced there too (the replacement
    /// depends on how the executable is linked), and each leaves a log line with its code.
    @Test("herald-intake answers libmicrohttpd's refusals in the JSON shape and logs each one")
    func theExecutableRendersAndLogsLibraryRefusals() throws {
        let process = try IntakeProcess()
        defer { process.stop() }
        let cases = [
            ("GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", "505", "http_version_not_supported"),
            (
                "POST /api/partners/notifications/push HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", "400",
                "malformed_request"
            ),
            ("GET /healthz HTTP/1.1\r\nHost: x\r\nbroken header line\r\n\r\n", "400", "malformed_request"),
            ("GET /api/internal/users/a%00b HTTP/1.1\r\nHost: x\r\n\r\n", "400", "invalid_path"),
        ]
        for (request, status, code) in cases {
            let answer = try rawExchange(port: process.port, request)
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer)")
            #expect(answer.contains(#"{"error":{"code":"\#(code)""#), "\(answer)")
            #expect(answer.components(separatedBy: "\r\nHTTP/1.1 ").count == 1, "one answer only: \(answer)")
        }
        try waitFor("the log lines", timeout: .seconds(5)) {
            process.child.output.contains(#""code":"http_version_not_supported""#)
                && process.child.output.contains(#""code":"malformed_request""#)
                && process.child.output.contains(#""code":"invalid_path""#)
        }
        #expect(!process.child.output.contains("libmicrohttpd's own error pages are not replaced"))
    }

    /// `Prefer: wait`'s long poll against devices that never answer (no worker runs in this process): 40 requests
    /// waiting 30 s on an intake with 8 handler threads. Before, they held every thread and nothing else was
    /// answered for 30 s.
    @Test(
        "40 Prefer: wait=30 requests hold no thread: healthz, an admin GET and another partner's push answer meanwhile")
    func waitingRequestsHoldNoThread() throws {
        let intake = try IntakeHarness { $0.threads = 8 }
        let slow = try intake.makePartner()
        let user = try intake.makeUser(tenant: slow.tenantID)
        let other = try intake.makePartner()
        let otherUser = try intake.makeUser(tenant: other.tenantID)
        let answers = Answers()
        let clients = (0..<40).map { index in
            Thread {
                let response = try? TestHTTPClient.json(
                    port: intake.port, method: "POST", path: "/api/partners/notifications/push", token: slow.key,
                    json: pushBody(slow, emails: [user.email]),
                    headers: [("Prefer", "wait=30"), ("Idempotency-Key", "w-\(index)")])
                answers.add(response)
            }
        }
        clients.forEach { $0.start() }
        let started = ContinuousClock.now
        try waitFor("40 requests waiting", timeout: .seconds(25)) { intake.server.waiter.count == 40 }

        // Each answers while all 40 still wait (the wait is 30 s; these must not queue behind it).
        #expect(try TestHTTPClient.send(port: intake.port, method: "GET", path: "/healthz").status == 200)
        #expect(try intake.admin("GET", "/api/admin/mini-app-partners").status == 200)
        let push = try intake.push(other.key, pushBody(other, emails: [otherUser.email]))
        #expect(push.status == 202)
        #expect(
            try intake.scrapeMetrics().text
                .contains("herald_intake_prefer_waiting 40\n"))
        #expect(intake.server.waiter.count == 40)
        #expect(ContinuousClock.now - started < .seconds(30))

        // Stopping answers every waiter with its counts as they are.
        intake.stop()
        try waitFor("every waiter answered", timeout: .seconds(20)) { answers.count == 40 }
        let responses = answers.all
        #expect(responses.allSatisfy { $0?.status == 200 && $0?.headers["preference-applied"] == "wait=30" })
        #expect(responses.allSatisfy { $0?.text.contains(#""status":"queued""#) == true })
    }

    @Test("Beyond the per-partner bound, and for a scheduled push, Prefer: wait answers 202 at once")
    func waitsAreBoundedAndScheduledPushesDoNotWait() throws {
        let intake = try IntakeHarness { $0.preferWaitMaxPerPartner = 2 }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let answers = Answers()
        let waiting = (0..<2).map { _ in
            Thread {
                answers.add(
                    try? TestHTTPClient.json(
                        port: intake.port, method: "POST", path: "/api/partners/notifications/push", token: partner.key,
                        json: pushBody(partner, emails: [user.email]), headers: [("Prefer", "wait=30")]))
            }
        }
        waiting.forEach { $0.start() }
        try waitFor("two waiting", timeout: .seconds(20)) { intake.server.waiter.count == 2 }
        let beyond = try TestHTTPClient.json(
            port: intake.port, method: "POST", path: "/api/partners/notifications/push", token: partner.key,
            json: pushBody(partner, emails: [user.email]), headers: [("Prefer", "wait=30")])
        #expect(beyond.status == 202)
        #expect(beyond.headers["preference-applied"] == nil)

        let sendAt = ISO8601.format(Date().addingTimeInterval(3600))
        let scheduled = try TestHTTPClient.json(
            port: intake.port, method: "POST", path: "/api/partners/notifications/push", token: partner.key,
            json: pushBody(partner, emails: [user.email], extra: #","sendAt":"\#(sendAt)""#),
            headers: [("Prefer", "wait=30")])
        #expect(scheduled.status == 202)
        #expect(scheduled.headers["preference-applied"] == nil)
        #expect(scheduled.text.contains(#""status":"scheduled""#))
        #expect(intake.server.waiter.count == 2)
        intake.stop()
        try waitFor("the two answered", timeout: .seconds(20)) { answers.count == 2 }
    }

    @Test("The admin and host tokens must differ: a configuration error at start-up")
    func adminAndHostTokensMustDiffer() throws {
        let environment = [
            "HERALD_DATABASE_URL": TestEnvironment.databaseURL,
            "HERALD_ADMIN_TOKEN": "same-token-value-0123456789abcdef",
            "HERALD_HOST_TOKEN": "same-token-value-0123456789abcdef",
            "HERALD_SIGNING_KEYS": "k1:" + Data(repeating: 1, count: 32).base64EncodedString(),
        ]
        #expect {
            _ = try IntakeConfiguration.fromEnvironment(environment)
        } throws: { error in
            (error as? ConfigurationError)?.variable == "HERALD_HOST_TOKEN"
        }
        let configuration = IntakeConfiguration(
            databaseURL: TestEnvironment.databaseURL, adminToken: "one-token-0123456789abcdef",
            hostToken: "one-token-0123456789abcdef", signingKeys: ["k": Array(repeating: 2, count: 32)],
            signingKeyID: "k")
        #expect(throws: ConfigurationError.self) { _ = try IntakeServer(configuration: configuration).start() }
    }

    /// Without the hashing, a guess of the wrong length returned at once and one of the right length walked
    /// the whole secret: the time told the secret's length.
    @Test("Secret comparison takes as long for a wrong-length guess as for a right-length one")
    func secretComparisonHasNoLengthExit() {
        let secret = [UInt8](repeating: 0x61, count: 256 * 1024)
        var sameLength = secret
        sameLength[sameLength.count - 1] = 0x62
        let longer = secret + [0x61]
        #expect(Digest.constantTimeEquals(secret, secret))
        #expect(!Digest.constantTimeEquals(secret, sameLength))
        #expect(!Digest.constantTimeEquals(secret, longer))
        #expect(!Digest.constantTimeEquals(secret, []))
        func fastest(_ guess: [UInt8]) -> Duration {
            (0..<15).map { _ in
                let start = ContinuousClock.now
                _ = Digest.constantTimeEquals(secret, guess)
                return ContinuousClock.now - start
            }.min()!
        }
        let right = fastest(sameLength)
        let wrong = fastest(longer)
        // The minimum of several runs filters the machine's noise; an early exit would be ~1000x faster.
        #expect(wrong * 3 > right, "wrong length \(wrong), right length \(right)")
    }

    /// A partner's pool that outgrows the per-address limit while its connections are busy: each request on a
    /// connection beyond it gets an answer it can act on, not a reset (libmicrohttpd used to close such a
    /// connection the moment it accepted it, under the request already sent).
    @Test(
        "Pushes on connections over the per-address limit are answered 503 too_many_connections with Retry-After; none is reset, none written"
    )
    func connectionsOverThePerAddressLimitAreAnswered() throws {
        // The held connections send nothing: on a loaded machine the default idle timeout (15 s) and read
        // deadline (20 s) could close them before the pushes below, and then nothing would be over the limit.
        let intake = try IntakeHarness(configure: {
            $0.maxConnectionsPerAddress = 4
            $0.idleTimeoutSeconds = 300
            $0.requestTimeoutSeconds = 300
        })
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        // The connections that made the partner and the user count against the limit until the server has seen
        // them close: a held one opened before that is refused, and four are never admitted.
        try waitFor("the setup's connections closed", timeout: .seconds(30)) { intake.server.admittedConnections == 0 }
        // Four connections open and busy as far as the limit is concerned.
        var held: [Int32] = []
        defer { held.forEach { close($0) } }
        for _ in 0..<4 {
            held.append(try TestHTTPClient.connectLoopback(port: intake.port, readTimeoutSeconds: 5))
        }
        // They count once the server has accepted them, which on a loaded machine takes a while: until then a
        // request on a fifth connection is served. (Probing with requests could not tell: a probe refused may have
        // met an earlier probe's connection the server had not yet seen closed, while a held one was still unseen.)
        try waitFor("the four held connections admitted", timeout: .seconds(30)) {
            intake.server.admittedConnections == 4
        }
        let body = pushBody(partner, emails: [user.email])
        let outcomes = runInParallel(8) { _ -> Result<TestHTTPClient.Response, TestHTTPClient.Failure> in
            do {
                return .success(try intake.push(partner.key, body))
            } catch {
                return .failure(TestHTTPClient.Failure(description: "\(error)"))
            }
        }
        for outcome in outcomes {
            guard case .success(let response) = outcome else {
                Issue.record("no answer: \(outcome)")
                continue
            }
            #expect(response.status == 503)
            #expect(response.errorCode == "too_many_connections")
            #expect(response.json["error"]?["field"] == .null)
            #expect(response.headers["retry-after"] == "1")
            #expect(response.headers["connection"]?.lowercased() == "close")
        }
        #expect(try DB.writes(partnerID: partner.id) == 0)
        // Room comes back as the server sees the connections close (on a loaded machine, not at once).
        held.forEach { close($0) }
        held = []
        var status = 0
        try waitFor("room for a connection", interval: .milliseconds(100)) {
            status = try intake.push(partner.key, body).status
            return status != 503
        }
        #expect(status == 202)
    }
}

/// Responses collected from client threads.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var responses: [TestHTTPClient.Response?] = []
    func add(_ response: TestHTTPClient.Response?) { lock.withLock { responses.append(response) } }
    var count: Int { lock.withLock { responses.count } }
    var all: [TestHTTPClient.Response?] { lock.withLock { responses } }
}

/// Sends raw bytes and reads until the server closes (or 5 s pass).
private func rawExchange(port: UInt16, _ request: String) throws -> String {
    let fd = try TestHTTPClient.connectLoopback(port: port, readTimeoutSeconds: 5)
    defer { close(fd) }
    let bytes = Array(request.utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { break }
        data += chunk[0..<count]
    }
    return String(decoding: data, as: UTF8.self)
}
