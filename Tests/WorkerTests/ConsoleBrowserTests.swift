import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// The operator console in headless Chromium (Selenium, Tests/Browser/console_browser.py) against an intake,
/// a worker and the simulator: sign-in, the overview read against the database, a failure replayed from the
/// page and seen sent, a hostile partner name shown as text, a partner key and its webhook secret each rotated with
/// an overlap that is then ended, a POST without the CSRF token refused.
/// HERALD_CONSOLE_SCREENSHOTS=<dir> also saves a PNG of each page there (docs/console.md's pictures).
@Suite("Operator console in a browser", .serialized, .requiresDatabase)
struct ConsoleBrowserTests {
    static let python = TestEnvironment.repositoryRoot.appendingPathComponent(".build/venv/bin/python")
    static let script = TestEnvironment.repositoryRoot.appendingPathComponent("Tests/Browser/console_browser.py")
    static let hostileName = "<img src=x onerror=alert(1)>"

    @Test("sign in, overview, replay from the failures page, hostile text, CSRF, sign-out")
    func console() async throws {
        for path in [Self.python.path, "/usr/bin/chromium", "/usr/bin/chromedriver"] {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw TestHTTPClient.Failure(description: "\(path) is missing: run scripts/setup (scripts/test does)")
            }
        }
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
        let partner = try harness.partner()
        let hostile = try harness.partner(displayName: Self.hostileName)
        let userID = "console-\(UUID().uuidString.prefix(8).lowercased())"
        let email = "\(userID)@example.com"
        let token = LiveActivityHarness.hexToken()
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(userID)", #"{"tenantId":"t1","emails":["\#(email)"]}"#),
            [200, 201])
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(userID)/devices/iphone",
                """
                {"platform":"ios","environment":"sandbox","apnsToken":"\(token)","bundleId":"\(harness.workers.credentials.apnsTopic)"}
                """), [200, 201])
        // The first send is refused for good; the replay's goes through.
        harness.simulator.setFault(SimulatorFault(status: 400, reason: "BadCollapseId", times: 1), token: token)
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(email)"]},"title":"Deposit <b>1/6</b>","body":"Confirmations"}"#),
            [202])
        let requestID = try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
        // A webhook the address policy refuses at once: its events fail without a wait.
        try harness.expect(
            harness.request(
                "PATCH", "/api/admin/mini-app-partners/\(partner.id)",
                token: LiveActivityHarness.adminToken,
                json: #"{"webhookUrl":"https://127.0.0.1:9/console-hook"}"#), [200])
        let worker = try harness.workers.startWorker { $0.heartbeat.interval = .milliseconds(250) }
        defer { worker.drain() }
        try await harness.workers.waitUntil("the delivery failed and the worker beat") {
            try harness.db.count("SELECT count(*) FROM delivery_history WHERE outcome = 'failed'") == 1
                && harness.db.count("SELECT count(*) FROM worker_heartbeats") == 1
        }

        // A second push goes through and the host reports it opened: the partners page shows the rates.
        try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(email)"]},"title":"Deposit 2/6","body":"Confirmations"}"#),
            [202])
        try await harness.workers.waitUntil("the second push sent") {
            try harness.db.count("SELECT count(*) FROM delivery_history WHERE outcome = 'sent'") == 1
        }
        let delivery = try #require(
            harness.simulator.received().first { $0.status == 200 }?.payload?["deliveryId"]?.stringValue)
        try harness.expect(
            harness.host("POST", "/api/internal/deliveries/\(delivery)/events", #"{"event":"opened"}"#), [201])

        var arguments = [
            Self.script.path, "--url", "http://127.0.0.1:\(harness.port)",
            "--token", LiveActivityHarness.adminToken, "--mini-app", partner.miniApp,
            "--hostile-mini-app", hostile.miniApp, "--hostile-name", Self.hostileName,
            "--request-id", requestID,
        ]
        if let directory = ProcessInfo.processInfo.environment["HERALD_CONSOLE_SCREENSHOTS"], !directory.isEmpty {
            arguments += ["--screenshots", directory]
        }
        let result = try ChildProcess.run(Self.python, arguments, environment: ProcessInfo.processInfo.environment)
        let lastLine = result.output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(result.status == 0, "\(result.output)")
        let read = (try? JSONParser.parse(Array(lastLine.utf8))) ?? .null
        #expect(read["ok"] == .bool(true), "\(result.output)")

        // What the overview showed, against the database at that time (nothing queued; one failure; one worker).
        let overview = read["overview"]
        #expect(overview?["failed"] == .string("1"), "\(lastLine)")
        #expect(overview?["pending"] == .string("0") && overview?["leased"] == .string("0"), "\(lastLine)")
        #expect(overview?["workers"] == .string("1 / 1"), "\(lastLine)")
        #expect(read["postWithoutCsrf"] == .number(403))
        // Delivered and opened over the last 7 days: 1 of the 1 delivery sent (the refused one counts nowhere).
        let rates = read["partnerRates"]?.arrayValue?.map { $0.arrayValue?.compactMap(\.stringValue) ?? [] }
        #expect(rates?.first?.contains("100.0% (1 / 1)") == true, "\(lastLine)")
        #expect(rates?.last?.contains("100.0% (1 / 1)") == true, "\(lastLine)")
        #expect(read["requestTitle"] == .string("[Pull] Deposit <b>1/6</b>"))
        // Sent after the replay: the simulator saw the same bytes twice, refused then accepted (the second push aside).
        let records = harness.simulator.received(token: token).filter {
            $0.payload?["deliveryId"]?.stringValue != delivery
        }
        #expect(records.map(\.status) == [400, 200])
        #expect(try harness.db.count("SELECT count(*) FROM console_sessions WHERE revoked_at IS NOT NULL") == 1)

        // The key rotated from the page with a day's overlap, then the overlap ended from the page: the new key works,
        // the old one is refused.
        #expect(read["previousKeyState"]?.stringValue?.hasPrefix("The old key works until") == true, "\(lastLine)")
        #expect(read["partnerState"]?.arrayValue?.count == 1, "\(lastLine)")
        #expect(
            read["endPreviousConfirm"]?.stringValue?.hasPrefix("End the previous key of \(partner.miniApp)?") == true)
        #expect(read["suspendConfirm"]?.stringValue?.hasPrefix("Suspend \(partner.miniApp)?") == true, "\(lastLine)")
        #expect(read["suspendedState"]?.arrayValue?.count == 1, "\(lastLine)")
        let audited = read["auditActions"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(
            Array(audited.prefix(6)) == [
                "partner.previous_webhook_secret_ended", "partner.webhook_secret_rotated",
                "partner.resumed", "partner.suspended", "partner.previous_key_ended",
                "partner.key_rotated",
            ], "\(lastLine)")
        let newKey = try #require(read["newKey"]?.stringValue)
        #expect(newKey.hasPrefix("mp_") && newKey != partner.apiKey)
        let status = "/api/partners/notifications/push/\(requestID)"
        try harness.expect(harness.request("GET", status, token: newKey), [200])
        try harness.expect(harness.request("GET", status, token: partner.apiKey), [401])
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM partners WHERE mini_app_id = '\(partner.miniApp)' AND previous_key_hash IS NULL
                """) == 1)

        // The webhook secret rotated from the page with an hour's overlap, then that ended: the new secret alone.
        #expect(
            read["previousWebhookSecretState"]?.stringValue?.hasPrefix("Webhooks carry a signature with the old")
                == true, "\(lastLine)")
        #expect(
            read["endPreviousWebhookSecretConfirm"]?.stringValue?
                .hasPrefix("End the previous webhook secret of \(partner.miniApp)?") == true, "\(lastLine)")
        let newSecret = try #require(read["newWebhookSecret"]?.stringValue)
        #expect(newSecret.hasPrefix("whsec_"))
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM partners
                 WHERE id = $1 AND webhook_secret = $2 AND previous_webhook_secret IS NULL
                """, [UUID(uuidString: partner.id)!, newSecret]) == 1)
    }
}
