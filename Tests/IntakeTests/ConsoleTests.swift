import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import Testing

/// The operator console (docs/console.md) against real Postgres: sign-in, the session cookie, expiry and
/// revocation, CSRF on state changes, the security headers, and the JSON endpoints over rows the intake wrote.
@Suite("Operator console", .serialized, .requiresDatabase)
struct ConsoleTests {
    static let console: IntakeHarness = {
        do {
            return try IntakeHarness {
                $0.consoleEnabled = true; $0.consoleSessionHours = 1
            }
        } catch {
            fatalError("cannot start the console intake: \(error)")
        }
    }()

    var intake: IntakeHarness { Self.console }

    /// A signed-in session: the cookie header value and the CSRF token.
    struct Session { let cookie: String; let csrf: String; let token: String }

    func signIn() throws -> Session {
        let response = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/console/login",
            headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(IntakeHarness.adminToken)".utf8))
        #expect(response.status == 303)
        #expect(response.headers["location"] == "/console/")
        let setCookie = try #require(response.headers["set-cookie"])
        for attribute in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/", "Max-Age=3600"] {
            #expect(setCookie.contains(attribute), "\(setCookie)")
        }
        let cookie = String(setCookie.split(separator: ";")[0])
        let token = String(cookie.split(separator: "=", maxSplits: 1)[1])
        let session = try get("/api/admin/console/session", cookie: cookie)
        #expect(session.status == 200)
        let csrf = try #require(session.json["csrfToken"]?.stringValue)
        return Session(cookie: cookie, csrf: csrf, token: token)
    }

    func get(_ path: String, cookie: String) throws -> TestHTTPClient.Response {
        try TestHTTPClient.send(port: intake.port, method: "GET", path: path, headers: [("Cookie", cookie)], body: [])
    }

    func send(_ method: String, _ path: String, _ session: Session, csrf: String?, json: String? = nil) throws
        -> TestHTTPClient.Response
    {
        var headers = [("Cookie", session.cookie)]
        if let csrf { headers.append(("X-CSRF-Token", csrf)) }
        if json != nil { headers.append(("Content-Type", "application/json")) }
        return try TestHTTPClient.send(
            port: intake.port, method: method, path: path, headers: headers,
            body: Array((json ?? "").utf8))
    }

    @Test("off unless HERALD_CONSOLE_ENABLED=1: every console path is 404, even with the admin token")
    func disabled() throws {
        let shared = IntakeHarness.shared
        for path in ["/console/", "/console/login", "/console/assets/console.js"] {
            #expect(try shared.request("GET", path, token: nil).status == 404, "\(path)")
        }
        #expect(try shared.admin("GET", "/api/admin/console/overview").status == 404)
    }

    @Test("pages carry a strict CSP, no framing, and no inline script")
    func securityHeaders() throws {
        for path in ["/console/", "/console/login", "/console/assets/console.js", "/console/assets/console.css"] {
            let response = try intake.request("GET", path, token: nil)
            #expect(response.status == 200, "\(path)")
            let csp = response.headers["content-security-policy"] ?? ""
            #expect(
                csp.contains("default-src 'self'") && csp.contains("script-src 'self'")
                    && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"), "\(csp)")
            #expect(response.headers["x-frame-options"] == "DENY")
            #expect(response.headers["x-content-type-options"] == "nosniff")
        }
        let page = try intake.request("GET", "/console/", token: nil).text
        #expect(!page.contains("<script>") && page.contains("<script src=\"/console/assets/console.js\""))
        // The script's one rule, checked as text: no markup sink anywhere in it.
        let script = try intake.request("GET", "/console/assets/console.js", token: nil).text
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("] {
            #expect(!script.contains(sink), "\(sink)")
        }
        #expect(try intake.request("GET", "/console/assets/other.js", token: nil).status == 404)
    }

    @Test("a wrong token is refused with the form again and no cookie")
    func wrongToken() throws {
        let response = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/console/login",
            headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array("token=nope".utf8))
        #expect(response.status == 401)
        #expect(response.headers["set-cookie"] == nil)
        #expect(response.text.contains("login-error"))
        let json = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/console/login", headers: [("Content-Type", "application/json")],
            body: Array("{}".utf8))
        #expect(json.status == 415)
    }

    @Test("the session cookie opens the API; the session is stored hashed and ends at sign-out")
    func sessionAndSignOut() throws {
        let session = try signIn()
        #expect(try get("/api/admin/console/overview", cookie: session.cookie).status == 200)
        #expect(try DB.count("SELECT count(*) FROM console_sessions WHERE token_hash = $1", [session.token]) == 0)
        // Sign-out is a state change: refused without the CSRF token.
        #expect(try send("POST", "/api/admin/console/sign-out", session, csrf: nil).status == 403)
        #expect(try get("/api/admin/console/overview", cookie: session.cookie).status == 200)
        let out = try send("POST", "/api/admin/console/sign-out", session, csrf: session.csrf)
        #expect(out.status == 204)
        #expect(out.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(try get("/api/admin/console/overview", cookie: session.cookie).status == 401)
    }

    @Test("an expired session is refused")
    func expiry() throws {
        let session = try signIn()
        #expect(try get("/api/admin/console/workers", cookie: session.cookie).status == 200)
        try DB.execute("UPDATE console_sessions SET expires_at = now() - interval '1 second' WHERE expires_at > now()")
        #expect(try get("/api/admin/console/workers", cookie: session.cookie).status == 401)
    }

    @Test("a console session may call the admin API, but a POST without the CSRF token is 403 and changes nothing")
    func csrf() throws {
        let session = try signIn()
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)/rotate-key"
        let refused = try send("POST", path, session, csrf: nil)
        #expect(refused.status == 403)
        #expect(refused.errorCode == "csrf_token_invalid")
        #expect(try send("POST", path, session, csrf: String(repeating: "0", count: 64)).status == 403)
        let hash = "SELECT key_hash FROM partners WHERE id = $1::uuid"
        let before = try DB.rows(hash, [partner.id]).first?.string(0)
        #expect(try DB.rows(hash, [partner.id]).first?.string(0) == before)
        let rotated = try send("POST", path, session, csrf: session.csrf)
        #expect(rotated.status == 200)
        #expect(rotated.json["apiKey"]?.stringValue?.hasPrefix("mp_") == true)
        #expect(try DB.rows(hash, [partner.id]).first?.string(0) != before)
        // A cookie never stands in for a wrong bearer token.
        let both = try TestHTTPClient.send(
            port: intake.port, method: "GET", path: "/api/admin/console/overview",
            headers: [("Cookie", session.cookie), ("Authorization", "Bearer wrong")], body: [])
        #expect(both.status == 401)
    }

    @Test("failures are grouped by partner, outcome and reason; a replay's dry run counts, the replay queues them")
    func failuresAndReplay() throws {
        let session = try signIn()
        let partner = try intake.makePartner(displayName: "<img src=x onerror=alert(1)>")
        let user = try intake.makeUser(tenant: partner.tenantID)
        let pushed = try intake.push(
            partner.key, pushBody(partner, emails: [user.email], title: "Console <b>title</b>"))
        #expect(pushed.status == 202)
        let requestID = try #require(pushed.json["requestId"]?.stringValue)
        try Self.fail(requestID: requestID, reason: "BadCollapseId")

        let failures = try get("/api/admin/console/failures?partner=\(partner.miniAppID)", cookie: session.cookie)
        #expect(failures.status == 200)
        let groups = failures.json["groups"]?.arrayValue ?? []
        #expect(groups.count == 1)
        #expect(groups.first?["reason"] == .string("BadCollapseId"))
        #expect(groups.first?["count"] == .number(2))

        let body = #"{"miniAppId":"\#(partner.miniAppID)","outcome":"failed","reason":"BadCollapseId","hours":1"#
        #expect(
            try send(
                "POST", "/api/admin/console/failures/replay", session, csrf: nil,
                json: body + #","dryRun":false}"#
            ).status == 403)
        let dry = try send("POST", "/api/admin/console/failures/replay", session, csrf: session.csrf, json: body + "}")
        #expect(dry.status == 200)
        #expect(dry.json["dryRun"] == .bool(true))
        #expect(dry.json["replayed"] == .number(2))
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE request_id = $1::uuid", [requestID]) == 0)
        let done = try send(
            "POST", "/api/admin/console/failures/replay", session, csrf: session.csrf,
            json: body + #","dryRun":false}"#)
        #expect(done.json["replayed"] == .number(2))
        #expect(
            try DB.count("SELECT count(*) FROM deliveries WHERE request_id = $1::uuid AND lane = 1", [requestID]) == 2)
        let after = try get("/api/admin/console/failures?partner=\(partner.miniAppID)", cookie: session.cookie)
        #expect(after.json["groups"]?.arrayValue?.isEmpty == true)

        // The partner's name comes back as the string it is (the page renders it as text).
        let partners = try get("/api/admin/console/partners", cookie: session.cookie)
        let row = partners.json["partners"]?.arrayValue?.first { $0["miniAppId"]?.stringValue == partner.miniAppID }
        #expect(row?["displayName"] == .string("<img src=x onerror=alert(1)>"))
        #expect(row?["usage"]?["lastMinute"] == .number(1))
        // Nothing sent (both deliveries failed): no rate yet, rather than 0%.
        #expect(row?["engagement"]?["sent"] == .number(0) && row?["engagement"]?["opened"] == .number(0))
        #expect(row?["engagement"]?["deliveryRate"] == .null && row?["engagement"]?["openRate"] == .null)
        #expect(!partners.text.contains("apiKey") && !partners.text.contains(partner.key))
    }

    @Test("requests by partner, time and id, with their deliveries and never a device token")
    func requests() throws {
        let session = try signIn()
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let pushed = try intake.push(partner.key, pushBody(partner, emails: [user.email], title: "Find me"))
        let requestID = try #require(pushed.json["requestId"]?.stringValue)
        let list = try get("/api/admin/console/requests?partner=\(partner.miniAppID)", cookie: session.cookie)
        #expect(list.status == 200)
        let rows = list.json["requests"]?.arrayValue ?? []
        #expect(rows.count == 1)
        #expect(rows.first?["title"] == .string("[Pull] Find me"))
        #expect(rows.first?["deliveries"] == .number(2))
        #expect(rows.first?["pending"] == .number(2))
        let since = ISO8601.format(Date().addingTimeInterval(-60))
        let byTime = try get(
            "/api/admin/console/requests?partner=\(partner.miniAppID)&since=\(since)", cookie: session.cookie)
        #expect(byTime.json["requests"]?.arrayValue?.count == 1)
        let future = ISO8601.format(Date().addingTimeInterval(3_600))
        let none = try get(
            "/api/admin/console/requests?partner=\(partner.miniAppID)&since=\(future)", cookie: session.cookie)
        #expect(none.json["requests"]?.arrayValue?.isEmpty == true)
        let byID = try get("/api/admin/console/requests?id=\(requestID)", cookie: session.cookie)
        #expect(byID.json["requests"]?.arrayValue?.count == 1)

        try Self.fail(requestID: requestID, reason: "Unregistered")
        let detail = try get("/api/admin/console/requests/\(requestID)", cookie: session.cookie)
        #expect(detail.status == 200)
        let deliveries = detail.json["deliveryRows"]?.arrayValue ?? []
        #expect(deliveries.count == 2)
        #expect(deliveries.allSatisfy { $0["reason"] == .string("Unregistered") && $0["attempts"] == .number(1) })
        #expect(!detail.text.contains(user.apnsToken) && !detail.text.contains(user.fcmToken))
        #expect(try get("/api/admin/console/requests/\(UUID().uuidString)", cookie: session.cookie).status == 404)
    }

    @Test(
        "bad query values are 400 naming the field, never 500",
        arguments: [
            ("/api/admin/console/requests?partner=%3Cimg%3E", "partner"),
            ("/api/admin/console/requests?id=nope", "id"),
            ("/api/admin/console/requests?until=", "until"),
            ("/api/admin/console/requests?since=yesterday", "since"),
            ("/api/admin/console/requests?until=0000-01-01T00:00:00Z", "until"),
            ("/api/admin/console/requests?limit=0", "limit"),
            ("/api/admin/console/failures?hours=100000", "hours"),
            ("/api/admin/console/tokens?hours=-1", "hours"),
        ])
    func badQueries(_ path: String, _ field: String) throws {
        let response = try intake.admin("GET", path)
        #expect(response.status == 400)
        #expect(response.errorField == field)
    }

    @Test("the overview counts the outbox and the last hour's outcomes as the database holds them")
    func overview() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        #expect(
            try intake.push(
                partner.key,
                pushBody(
                    partner, emails: [user.email],
                    extra: #","sendAt":"\#(ISO8601.format(Date().addingTimeInterval(3_600)))""#)
            )
            .status == 202)
        let response = try intake.admin("GET", "/api/admin/console/overview")
        #expect(response.status == 200)
        // This partner's rows, which only this test writes (the database is shared with other suites).
        func count(_ state: String) -> Double {
            (response.json["queueByPartner"]?.arrayValue ?? [])
                .filter { $0["miniAppId"]?.stringValue == partner.miniAppID && $0["state"] == .string(state) }
                .compactMap { $0["count"]?.numberValue }.reduce(0, +)
        }
        let partnerID = partner.id
        let due = try DB.count(
            """
            SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid AND state = 'pending' AND available_at <= now()
            """, [partnerID])
        let later = try DB.count(
            """
            SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid AND state = 'pending' AND available_at > now()
            """, [partnerID])
        #expect(due == 2 && later == 2)
        #expect(count("pending") == Double(due))
        #expect(count("scheduled") == Double(later))
        #expect(response.json["lastHour"]?.arrayValue?.count == 60)
        let states = Set((response.json["queue"]?.arrayValue ?? []).compactMap { $0["state"]?.stringValue })
        #expect(states == ["pending", "scheduled", "leased"])
    }

    @Test("workers: live ones, and lost ones after three missed beats, with the release each runs")
    func workers() throws {
        let id = TestEnvironment.unique("worker")
        try DB.execute(
            """
            INSERT INTO worker_heartbeats (worker_id, host, version, started_at, last_seen_at, in_flight, paused_upstreams,
                                           claims_per_second, interval_seconds, release)
            VALUES ($1, 'h1', 'test', now(), now(), 3, '{apns}', 12.5, 5, '0.10.0'), ($1 || '-lost', 'h2', 'test', now(),
                    now() - interval '20 seconds', 0, '{}', 0, 5, NULL)
            """, [id])
        let response = try intake.admin("GET", "/api/admin/console/workers")
        let workers = response.json["workers"]?.arrayValue ?? []
        let live = workers.first { $0["workerId"]?.stringValue == id }
        #expect(live?["status"] == .string("live"))
        #expect(live?["inFlight"] == .number(3))
        #expect(live?["pausedUpstreams"] == .array([.string("apns")]))
        #expect(live?["release"] == .string("0.10.0"))
        let lost = workers.first { $0["workerId"]?.stringValue == id + "-lost" }
        #expect(lost?["status"] == .string("lost"))
        // Written by a release before the column: no release named.
        #expect(lost?["release"] == .null)
        let overview = try intake.admin("GET", "/api/admin/console/overview").json
        #expect(overview["pausedUpstreams"]?.arrayValue?.contains { $0["workerId"]?.stringValue == id } == true)
    }

    /// Moves a request's outbox rows to history as `failed` with `reason`, as a worker's completion would.
    static func fail(requestID: String, reason: String) throws {
        try DB.execute(
            """
            WITH d AS (DELETE FROM deliveries WHERE request_id = $1::uuid RETURNING *), h AS (
                INSERT INTO delivery_history (id, request_id, request_created_at, partner_id, lane, service, user_id,
                                              device_id, outcome, attempts, last_error, created_at, finished_at, payload)
                SELECT id, request_id, request_created_at, partner_id, lane, service, user_id, device_id, 'failed', 1, $2,
                       created_at, now(), payload FROM d RETURNING request_id)
            UPDATE push_requests SET failed = failed + (SELECT count(*) FROM h) WHERE id = $1::uuid
            """, [requestID, reason])
    }
}

@Suite("Operator console: Live Activities and webhooks", .serialized, .requiresDatabase)
struct ConsoleWebhookTests {
    var intake: IntakeHarness { ConsoleTests.console }

    @Test("failed webhook events are listed and sent again, a dry run first")
    func webhooks() throws {
        let partner = try intake.makePartner(extra: [("webhookUrl", .string("https://hooks.example.com/herald"))])
        let id = UUID()
        try DB.execute(
            """
            INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, state, available_at,
                                        attempts, last_status, last_error, finished_at)
            VALUES ($1, $2::uuid, 'push.completed', gen_random_uuid(), '{}', now(), now() - interval '1 day', 'failed', now(),
                    12, 500, 'http_500', now())
            """, [id, partner.id])
        let list = try intake.admin("GET", "/api/admin/console/webhooks?hours=1")
        #expect(list.status == 200)
        let event = list.json["events"]?.arrayValue?.first { $0["id"]?.stringValue == id.uuidString.lowercased() }
        #expect(event?["miniAppId"] == .string(partner.miniAppID))
        #expect(event?["lastError"] == .string("http_500"))
        let body = #"{"eventId":"\#(id.uuidString)","hours":1"#
        let dry = try intake.admin("POST", "/api/admin/console/webhooks/replay", body + "}")
        #expect(dry.json["replayable"] == .number(1) && dry.json["replayed"] == .number(0), "\(dry.text)")
        #expect(try DB.count("SELECT count(*) FROM webhook_events WHERE id = $1 AND state = 'failed'", [id]) == 1)
        let done = try intake.admin("POST", "/api/admin/console/webhooks/replay", body + #","dryRun":false}"#)
        #expect(done.json["replayed"] == .number(1), "\(done.text)")
        #expect(try DB.count("SELECT count(*) FROM webhook_events WHERE id = $1 AND state = 'pending'", [id]) == 1)
        #expect(try intake.admin("POST", "/api/admin/console/webhooks/replay", #"{"eventId":"nope"}"#).status == 400)
        #expect(
            try intake.admin("POST", "/api/admin/console/webhooks/replay", #"{"miniAppId":"no.such.app"}"#).status
                == 404)
    }

    @Test("Live Activities: active ones per partner")
    func activities() throws {
        let response = try intake.admin("GET", "/api/admin/console/live-activities")
        #expect(response.status == 200)
        let partners = response.json["partners"]?.arrayValue ?? []
        let database = try DB.count("SELECT count(*) FROM live_activities WHERE status = 'active'")
        #expect(Int(partners.compactMap { $0["active"]?.numberValue }.reduce(0, +)) <= database + 5)
    }
}
