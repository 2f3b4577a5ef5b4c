import Foundation
import HTTPServer
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Intake
import Testing

/// The admin audit trail (sql/047_admin_audit.sql, `GET /api/admin/audit`): each change to a partner and each
/// console sign-in, sign-out and replay is one entry with its actor and client, written by the change's own
/// transaction, whoever made it; never a key, a key's hash or a secret.
@Suite("Admin audit trail", .serialized, .requiresDatabase)
struct AdminAuditTests {
    static let previousAdmin = "previous-admin-token-for-audit-0123"

    static let intake: IntakeHarness = {
        do {
            return try IntakeHarness {
                $0.consoleEnabled = true
                $0.adminTokenPrevious = previousAdmin
                // The test client is the proxy: its X-Forwarded-For names the client.
                $0.trustedProxies = [IPNetwork("127.0.0.1")!]
            }
        } catch { fatalError("cannot start the test intake: \(error)") }
    }()

    var intake: IntakeHarness { Self.intake }

    func admin(
        _ method: String, _ path: String, _ json: String? = nil, token: String = IntakeHarness.adminToken,
        client: String = "203.0.113.7"
    ) throws -> TestHTTPClient.Response {
        try intake.request(method, path, token: token, json: json, headers: [("X-Forwarded-For", client)])
    }

    func entries(_ query: String) throws -> [JSONValue] {
        let page = try intake.admin("GET", "/api/admin/audit?" + query)
        #expect(page.status == 200, "\(page.text)")
        return page.json["entries"]?.arrayValue ?? []
    }

    @Test("Every change to a partner is one entry, newest first, with its actor, client and what changed; no secret")
    func partnerChanges() throws {
        let miniApp = TestEnvironment.unique("audit").replacingOccurrences(of: "-", with: ".")
        let created = try admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniApp)","displayName":"Audit","tenantId":"t-audit"}"#)
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["id"]?.stringValue)
        let firstKey = try #require(created.json["apiKey"]?.stringValue)
        let path = "/api/admin/mini-app-partners/\(id)"
        #expect(try admin("PATCH", path, #"{"rateLimitPerMinute":120,"displayName":"Audit 2"}"#).status == 200)
        let hooked = try admin("PATCH", path, #"{"webhookUrl":"https://hooks.example.com/herald"}"#)
        let firstSecret = try #require(hooked.json["webhookSecret"]?.stringValue)
        let rotatedSecret = try admin("POST", path + "/rotate-webhook-secret")
        let secondSecret = try #require(rotatedSecret.json["webhookSecret"]?.stringValue)
        let rotated = try admin(
            "POST", path + "/rotate-key", #"{"previousKeyValidSeconds":60}"#, token: Self.previousAdmin,
            client: "198.51.100.9")
        let secondKey = try #require(rotated.json["apiKey"]?.stringValue)
        #expect(try admin("DELETE", path + "/previous-key").status == 200)
        #expect(try admin("PATCH", path, #"{"rateLimitPerMinute":120}"#).status == 200, "no change, no entry")
        #expect(try admin("DELETE", path).status == 200)

        let list = try entries("partner=\(id)")
        #expect(
            list.map { $0["action"]?.stringValue ?? "" } == [
                "partner.revoked", "partner.previous_key_ended", "partner.key_rotated",
                "partner.webhook_secret_rotated",
                "partner.updated", "partner.updated", "partner.created",
            ])
        #expect(list.allSatisfy { $0["miniAppId"] == .string(miniApp) && $0["partnerId"] == .string(id) })
        let rotation = list[2]
        #expect(rotation["actor"] == .string("admin_token_previous"))
        #expect(rotation["client"] == .string("198.51.100.9"))
        #expect(rotation["detail"]?["previousKeyValidUntil"]?.stringValue != nil)
        for entry in list where entry != rotation {
            #expect(entry["actor"] == .string("admin_token") && entry["client"] == .string("203.0.113.7"), "\(entry)")
            #expect(entry["actorDetail"] == .null)
        }
        let fields = list[5]["detail"]
        #expect(
            fields?["rateLimitPerMinute"]?["from"] == .number(60)
                && fields?["rateLimitPerMinute"]?["to"] == .number(120),
            "\(list[5])")
        #expect(
            fields?["displayName"]?["from"] == .string("Audit") && fields?["displayName"]?["to"] == .string("Audit 2"))
        #expect(fields?.objectMembers?.count == 2, "only what changed: \(list[5])")
        #expect(list[4]["detail"]?["webhookUrl"]?["to"] == .string("https://hooks.example.com/herald"))
        #expect(list[6]["detail"]?["displayName"] == .string("Audit"))

        // Neither the keys, their hashes nor the webhook secrets are in any entry.
        let text = try intake.admin("GET", "/api/admin/audit?partner=\(id)").text
        for secret in [
            firstKey, secondKey, PartnerAPIKey.hash(firstKey), PartnerAPIKey.hash(secondKey), firstSecret,
            secondSecret,
        ] {
            #expect(!text.contains(secret))
        }

        // Pages: `next` is the `before` of the older page.
        let page = try intake.admin("GET", "/api/admin/audit?partner=\(id)&limit=3")
        #expect(page.json["entries"]?.arrayValue?.count == 3)
        let next = try #require(page.json["next"]?.numberValue)
        let older = try entries("partner=\(id)&limit=10&before=\(Int(next))")
        #expect(
            older.map { $0["action"]?.stringValue ?? "" }
                == ["partner.webhook_secret_rotated", "partner.updated", "partner.updated", "partner.created"])
        #expect(
            try intake.admin("GET", "/api/admin/audit?partner=\(id)&limit=10&before=\(Int(next))").json["next"] == .null
        )
    }

    @Test("A webhook secret rotation is an entry with its overlap's end; so is that overlap's end; never a secret")
    func webhookSecretOverlap() throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)"
        let hooked = try admin("PATCH", path, #"{"webhookUrl":"https://hooks.example.com/a"}"#)
        var secrets = [try #require(hooked.json["webhookSecret"]?.stringValue)]
        let overlapped = try admin("POST", path + "/rotate-webhook-secret", #"{"previousSecretValidSeconds":600}"#)
        secrets.append(try #require(overlapped.json["webhookSecret"]?.stringValue))
        let until = try #require(overlapped.json["previousWebhookSecretExpiresAt"]?.stringValue)
        #expect(try admin("DELETE", path + "/previous-webhook-secret").status == 200)
        #expect(try admin("DELETE", path + "/previous-webhook-secret").status == 200, "nothing to end, no entry")
        let atOnce = try admin("POST", path + "/rotate-webhook-secret")
        secrets.append(try #require(atOnce.json["webhookSecret"]?.stringValue))
        let again = try admin("POST", path + "/rotate-webhook-secret", #"{"previousSecretValidSeconds":600}"#)
        secrets.append(try #require(again.json["webhookSecret"]?.stringValue))
        let secondUntil = try #require(again.json["previousWebhookSecretExpiresAt"]?.stringValue)
        // A new URL gets a new secret and ends the overlap.
        let moved = try admin("PATCH", path, #"{"webhookUrl":"https://hooks.example.com/b"}"#)
        secrets.append(try #require(moved.json["webhookSecret"]?.stringValue))

        let list = try entries("partner=\(partner.id)")
        #expect(
            list.map { $0["action"]?.stringValue ?? "" }.prefix(7) == [
                "partner.updated", "partner.previous_webhook_secret_ended", "partner.webhook_secret_rotated",
                "partner.webhook_secret_rotated", "partner.previous_webhook_secret_ended",
                "partner.webhook_secret_rotated",
                "partner.updated",
            ], "\(list)")
        // The same instant as the answer showed (each side truncates its own microseconds to milliseconds).
        func same(_ detail: JSONValue?, _ key: String, _ time: String) -> Bool {
            guard detail?.objectMembers?.map(\.key) == [key],
                let logged = detail?[key]?.stringValue.flatMap(ISO8601.parse), let shown = ISO8601.parse(time)
            else { return false }
            return abs(logged.timeIntervalSince(shown)) < 0.002
        }
        #expect(list[0]["detail"]?["webhookUrl"]?["to"] == .string("https://hooks.example.com/b"))
        #expect(same(list[1]["detail"], "wasValidUntil", secondUntil), "\(list[1])")
        #expect(same(list[2]["detail"], "previousSecretValidUntil", secondUntil), "\(list[2])")
        #expect(list[3]["detail"] == .object([("previousSecretValidUntil", .null)]), "\(list[3])")
        #expect(same(list[4]["detail"], "wasValidUntil", until), "\(list[4])")
        #expect(same(list[5]["detail"], "previousSecretValidUntil", until), "\(list[5])")
        let text = try intake.admin("GET", "/api/admin/audit?partner=\(partner.id)").text
        for secret in Set(secrets) { #expect(!text.contains(secret)) }
        #expect(Set(secrets).count == 5)
    }

    @Test("Console sign-in, replay and sign-out are entries naming the session by its hash's prefix")
    func consoleSession() throws {
        let signIn = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/console/login",
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-For", "192.0.2.44")],
            body: Array("token=\(IntakeHarness.adminToken)".utf8))
        #expect(signIn.status == 303)
        let token = try #require(
            signIn.headers["set-cookie"]?.split(separator: ";").first?
                .split(separator: "=", maxSplits: 1).last.map(String.init))
        let cookie = "__Host-herald_console=\(token)"
        let prefix = String(Digest.sha256Hex(token).prefix(12))
        let session = try TestHTTPClient.send(
            port: intake.port, method: "GET", path: "/api/admin/console/session",
            headers: [("Cookie", cookie)], body: [])
        let csrf = try #require(session.json["csrfToken"]?.stringValue)
        let partner = try intake.makePartner()
        let replay = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/api/admin/console/failures/replay",
            headers: [
                ("Cookie", cookie), ("X-CSRF-Token", csrf), ("Content-Type", "application/json"),
                ("X-Forwarded-For", "192.0.2.44"),
            ],
            body: Array(#"{"miniAppId":"\#(partner.miniAppID)","outcome":"failed","dryRun":false}"#.utf8))
        #expect(replay.status == 200, "\(replay.text)")
        let signOut = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: "/api/admin/console/sign-out",
            headers: [("Cookie", cookie), ("X-CSRF-Token", csrf)], body: [])
        #expect(signOut.status == 204)

        let list = try entries("limit=1000")
        let signedIn = try #require(
            list.first {
                $0["action"] == .string("console.signed_in") && $0["detail"]?["session"] == .string(prefix)
            })
        #expect(signedIn["actor"] == .string("admin_token") && signedIn["client"] == .string("192.0.2.44"))
        let replayed = try #require(
            list.first {
                $0["action"] == .string("deliveries.replayed") && $0["miniAppId"] == .string(partner.miniAppID)
            })
        #expect(replayed["actor"] == .string("console") && replayed["actorDetail"] == .string(prefix))
        #expect(replayed["detail"]?["outcome"] == .string("failed") && replayed["detail"]?["replayed"] == .number(0))
        let signedOut = try #require(
            list.first {
                $0["action"] == .string("console.signed_out") && $0["detail"]?["session"] == .string(prefix)
            })
        #expect(signedOut["actor"] == .string("console") && signedOut["actorDetail"] == .string(prefix))
        #expect(!(try intake.admin("GET", "/api/admin/audit?limit=1000").text.contains(token)))
    }

    @Test("A change made by hand in SQL is recorded as the database role")
    func byHand() throws {
        let partner = try intake.makePartner()
        try DB.execute("UPDATE partners SET rate_limit_per_day = 77 WHERE id = $1::uuid", [partner.id])
        let latest = try #require(try entries("partner=\(partner.id)").first)
        #expect(latest["action"] == .string("partner.updated"))
        #expect(latest["actor"] == .string("database"))
        #expect(latest["actorDetail"]?.stringValue?.isEmpty == false)
        #expect(latest["detail"]?["rateLimitPerDay"]?["to"] == .number(77))
    }

    @Test("Bad query parameters are 400 naming the parameter")
    func badQueries() throws {
        for (query, field) in [
            ("partner=x", "partner"), ("limit=0", "limit"), ("limit=1001", "limit"),
            ("before=0", "before"), ("before=x", "before"),
        ] {
            let answer = try intake.admin("GET", "/api/admin/audit?" + query)
            #expect(answer.status == 400, "\(query)")
            #expect(answer.json["error"]?["field"] == .string(field), "\(query): \(answer.text)")
        }
        #expect(try intake.request("GET", "/api/admin/audit", token: IntakeHarness.hostToken).status == 401)
    }
}
