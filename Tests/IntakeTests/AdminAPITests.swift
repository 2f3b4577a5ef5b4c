import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@Suite("Admin API", .requiresDatabase)
struct AdminAPITests {
    let intake = IntakeHarness.shared

    @Test("creating a partner returns the key once; only its hash is stored")
    func create() throws {
        let miniAppID = "fun.pull." + TestEnvironment.unique("gacha")
        let response = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Pull","tenantId":"based"}"#)
        #expect(response.status == 201)
        let json = response.json
        let key = try #require(json["apiKey"]?.stringValue)
        #expect(PartnerAPIKey.isWellFormed(key))
        #expect(json["rateLimitPerMinute"] == .number(60))
        #expect(json["rateLimitPerDay"] == .number(10_000))
        #expect(json["tenantId"] == .string("based"))
        #expect(json["revokedAt"] == .null)
        let id = try #require(json["id"]?.stringValue)
        let stored = try #require(try DB.rows("SELECT key_hash FROM partners WHERE id = $1::uuid", [id]).first)
        #expect(try stored.string(0) == PartnerAPIKey.hash(key))
        #expect(try DB.count("SELECT count(*) FROM partners WHERE key_hash = $1", [key]) == 0)

        let list = try intake.admin("GET", "/api/admin/mini-app-partners")
        #expect(list.status == 200)
        #expect(!list.text.contains(key))
        #expect(!list.text.contains(PartnerAPIKey.hash(key)))
        let listed = list.json["partners"]?.arrayValue?.first { $0["id"] == .string(id) }
        #expect(listed?["miniAppId"] == .string(miniAppID))
        #expect(listed?["apiKey"] == nil)

        let duplicate = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Again"}"#)
        #expect(duplicate.status == 409)
        #expect(duplicate.errorCode == "mini_app_taken")
    }

    @Test(
        "admin input is validated and nothing is written",
        arguments: [
            #"{"displayName":"Pull"}"#,
            #"{"miniAppId":"a b","displayName":"Pull"}"#,
            #"{"miniAppId":"ok.app","displayName":"[Based] Pull"}"#,
            #"{"miniAppId":"ok.app","displayName":"Pull","rateLimitPerMinute":0}"#,
            #"{"miniAppId":"ok.app","displayName":"Pull","iconUrl":"http://insecure.example.com/i.png"}"#,
            #"{"miniAppId":"ok.app","displayName":"Pull","apiKey":"mp_chosen"}"#,
        ])
    func invalidCreate(_ body: String) throws {
        let before = try DB.count("SELECT count(*) FROM partners")
        let response = try intake.admin("POST", "/api/admin/mini-app-partners", body)
        #expect(response.status == 400, "\(response.text)")
        #expect(try DB.count("SELECT count(*) FROM partners WHERE mini_app_id = 'ok.app'") == 0)
        _ = before
    }

    @Test("admin routes need the admin token")
    func authentication() throws {
        let path = "/api/admin/mini-app-partners"
        #expect(try intake.request("GET", path, token: nil).status == 401)
        #expect(try intake.request("GET", path, token: IntakeHarness.hostToken).status == 401)
        #expect(try intake.request("GET", path, token: IntakeHarness.adminToken + "x").status == 401)
        let partner = try intake.makePartner()
        #expect(try intake.request("GET", path, token: partner.key).status == 401)
    }

    @Test("PATCH changes limits and display name; the prefix follows")
    func update() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let response = try intake.admin(
            "PATCH", "/api/admin/mini-app-partners/\(partner.id)",
            #"{"displayName":"Pull Pro","rateLimitPerDay":500,"iconUrl":null}"#)
        #expect(response.status == 200)
        #expect(response.json["displayName"] == .string("Pull Pro"))
        #expect(response.json["rateLimitPerDay"] == .number(500))
        #expect(response.json["iconUrl"] == .null)
        // The partner profile is cached for at most 2 s per process: pushes until one carries the new name.
        var title: String?
        try waitFor("the new display name in a push", timeout: .seconds(10), interval: .milliseconds(200)) {
            let push = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
            let requestID = try #require(push.json["requestId"]?.stringValue)
            title = try DB.rows("SELECT title FROM push_requests WHERE id = $1::uuid", [requestID]).first?.string(0)
            return title != "[Pull] Deposit pending"
        }
        #expect(title == "[Pull Pro] Deposit pending")
        #expect(
            try intake.admin("PATCH", "/api/admin/mini-app-partners/\(UUID())", #"{"displayName":"X"}"#).status == 404)
        #expect(
            try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"miniAppId":"x"}"#).status == 400
        )
    }

    @Test("a revoked key is refused within 5 seconds on every intake process")
    func revocation() throws {
        let other = try IntakeProcess()
        defer { other.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email])
        // Warm both processes' caches with the valid key.
        #expect(try intake.push(partner.key, body).status == 202)
        #expect(
            try other.request("POST", "/api/partners/notifications/push", token: partner.key, json: body).status == 202)

        let revoked = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)")
        #expect(revoked.status == 200)
        #expect(revoked.json["revokedAt"] != .null)
        try waitFor("the key refused by both intakes", timeout: .seconds(5), interval: .milliseconds(100)) {
            let here = try intake.push(partner.key, body).status
            let there = try other.request("POST", "/api/partners/notifications/push", token: partner.key, json: body)
                .status
            return here == 401 && there == 401
        }
        #expect(try intake.admin("POST", "/api/admin/mini-app-partners/\(partner.id)/rotate-key").status == 409)
    }

    @Test("rotating the key makes the old one fail and the new one work")
    func rotation() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let rotated = try intake.admin("POST", "/api/admin/mini-app-partners/\(partner.id)/rotate-key")
        #expect(rotated.status == 200)
        let newKey = try #require(rotated.json["apiKey"]?.stringValue)
        #expect(newKey != partner.key)
        #expect(try intake.push(newKey, pushBody(partner, emails: [user.email])).status == 202)
        try waitFor("the old key refused", timeout: .seconds(5), interval: .milliseconds(100)) {
            try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 401
        }
        #expect(try intake.admin("POST", "/api/admin/mini-app-partners/\(UUID())/rotate-key").status == 404)
    }
}

/// The partner row's `sound` and `allowTimeSensitive`, through the admin API and into pushes.
@Suite("Admin API: sound and time-sensitive permission", .requiresDatabase)
struct PartnerPresentationAdminTests {
    let intake = IntakeHarness.shared
    static let path = "/api/admin/mini-app-partners"

    func columns(_ id: String) throws -> (sound: String?, allowTimeSensitive: Bool) {
        let row = try #require(
            try DB.rows("SELECT sound, allow_time_sensitive FROM partners WHERE id = $1::uuid", [id]).first)
        return (row.optionalString(0), try row.bool(1))
    }

    func listed(_ id: String) throws -> JSONValue? {
        try intake.admin("GET", Self.path).json["partners"]?.arrayValue?.first { $0["id"] == .string(id) }
    }

    @Test("create: sound defaults to \"default\" and allowTimeSensitive to false; both are stored and shown")
    func createDefaults() throws {
        let created = try intake.admin(
            "POST", Self.path,
            #"{"miniAppId":"\#(TestEnvironment.unique("snd"))","displayName":"Pull"}"#)
        #expect(created.status == 201)
        #expect(created.json["sound"] == .string("default"))
        #expect(created.json["allowTimeSensitive"] == .bool(false))
        let id = try #require(created.json["id"]?.stringValue)
        let stored = try columns(id)
        #expect(stored.sound == "default" && !stored.allowTimeSensitive)
        #expect(try listed(id)?["sound"] == .string("default"))
        #expect(try listed(id)?["allowTimeSensitive"] == .bool(false))
    }

    @Test(
        "create with a sound file and the permission; null sound is silent, null permission the default",
        arguments: [
            (#""sound":"chime.caf","allowTimeSensitive":true"#, "chime.caf" as String?, true),
            (#""sound":null,"allowTimeSensitive":false"#, nil, false),
            (#""sound":"Alarm Tone.aiff","allowTimeSensitive":null"#, "Alarm Tone.aiff", false),
        ])
    func createWithFields(_ fields: String, _ sound: String?, _ allowed: Bool) throws {
        let created = try intake.admin(
            "POST", Self.path,
            #"{"miniAppId":"\#(TestEnvironment.unique("snd"))","displayName":"Pull",\#(fields)}"#)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["sound"] == (sound.map { .string($0) } ?? .null))
        #expect(created.json["allowTimeSensitive"] == .bool(allowed))
        let id = try #require(created.json["id"]?.stringValue)
        let stored = try columns(id)
        #expect(stored.sound == sound && stored.allowTimeSensitive == allowed)
        let listed = try listed(id)
        #expect(listed?["sound"] == (sound.map { .string($0) } ?? .null))
        #expect(listed?["allowTimeSensitive"] == .bool(allowed))
    }

    static let invalidFields: [(String, String)] = [
        (#""sound":"""#, "sound"),
        (#""sound":"sounds/chime.caf""#, "sound"),
        (#""sound":"..\\chime.caf""#, "sound"),
        (#""sound":".hidden""#, "sound"),
        (#""sound":" chime.caf""#, "sound"),
        (#""sound":"chi\u0000me""#, "sound"),
        (#""sound":"chi\u202eme""#, "sound"),
        (#""sound":"\#(String(repeating: "x", count: 65))""#, "sound"),
        (#""sound":3"#, "sound"),
        (#""sound":false"#, "sound"),
        (#""sound":{"name":"chime.caf"}"#, "sound"),
        (#""allowTimeSensitive":"yes""#, "allowTimeSensitive"),
        (#""allowTimeSensitive":1"#, "allowTimeSensitive"),
    ]

    @Test(
        "a bad sound or permission on create is 400 with the field named; nothing is written",
        arguments: invalidFields)
    func invalidCreate(_ fields: String, _ field: String) throws {
        let miniApp = TestEnvironment.unique("snd")
        let response = try intake.admin(
            "POST", Self.path, #"{"miniAppId":"\#(miniApp)","displayName":"Pull",\#(fields)}"#)
        #expect(response.status == 400, "\(response.text)")
        #expect(response.errorCode == "invalid_field")
        #expect(response.errorField == field)
        #expect(response.json["error"]?["message"]?.stringValue?.isEmpty == false)
        #expect(try DB.count("SELECT count(*) FROM partners WHERE mini_app_id = $1", [miniApp]) == 0)
    }

    @Test("a bad sound or permission on PATCH is 400 with the field named; nothing changes", arguments: invalidFields)
    func invalidUpdate(_ fields: String, _ field: String) throws {
        let partner = try intake.makePartner(extra: [("sound", .string("chime.caf"))])
        let response = try intake.admin("PATCH", "\(Self.path)/\(partner.id)", #"{"displayName":"Changed",\#(fields)}"#)
        #expect(response.status == 400, "\(response.text)")
        #expect(response.errorCode == "invalid_field")
        #expect(response.errorField == field)
        let stored = try columns(partner.id)
        #expect(stored.sound == "chime.caf" && !stored.allowTimeSensitive)
        #expect(
            try DB.rows("SELECT display_name FROM partners WHERE id = $1::uuid", [partner.id]).first?.string(0)
                == "Pull")
    }

    @Test("PATCH sets, silences and keeps the sound, and grants and withdraws the permission")
    func update() throws {
        let partner = try intake.makePartner()
        let path = "\(Self.path)/\(partner.id)"
        var response = try intake.admin("PATCH", path, #"{"sound":"ping.aiff","allowTimeSensitive":true}"#)
        #expect(response.status == 200)
        #expect(response.json["sound"] == .string("ping.aiff"))
        #expect(response.json["allowTimeSensitive"] == .bool(true))
        #expect(try columns(partner.id) == ("ping.aiff", true))

        // Absent and null permission keep what is stored; other fields change alone.
        response = try intake.admin("PATCH", path, #"{"rateLimitPerDay":700,"allowTimeSensitive":null}"#)
        #expect(response.json["sound"] == .string("ping.aiff"))
        #expect(response.json["allowTimeSensitive"] == .bool(true))
        #expect(try columns(partner.id) == ("ping.aiff", true))

        response = try intake.admin("PATCH", path, #"{"sound":null,"allowTimeSensitive":false}"#)
        #expect(response.status == 200)
        #expect(response.json["sound"] == .null)
        #expect(response.json["allowTimeSensitive"] == .bool(false))
        #expect(try columns(partner.id) == (nil, false))
        #expect(try listed(partner.id)?["sound"] == .null)

        response = try intake.admin("PATCH", path, #"{"sound":"default"}"#)
        #expect(response.json["sound"] == .string("default"))
        #expect(try columns(partner.id) == ("default", false))
    }

    @Test("PATCHed settings reach the partner's pushes once its cached profile expires")
    func updateReachesPushes() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let timeSensitive = pushBody(partner, emails: [user.email], extra: #","interruptionLevel":"time-sensitive""#)
        let refused = try intake.push(partner.key, timeSensitive)
        #expect(refused.status == 403)
        #expect(refused.errorCode == "time_sensitive_not_allowed")

        let patched = try intake.admin(
            "PATCH", "\(Self.path)/\(partner.id)",
            #"{"sound":"chime.caf","allowTimeSensitive":true}"#)
        #expect(patched.status == 200)
        // The partner profile is cached for at most 2 s per process; the refusals meanwhile write nothing.
        var accepted = try intake.push(partner.key, timeSensitive)
        try waitFor("the cached profile expired", timeout: .seconds(10), interval: .milliseconds(200)) {
            accepted = try intake.push(partner.key, timeSensitive)
            return accepted.status != 403
        }
        #expect(accepted.status == 202, "\(accepted.text)")
        let requestID = try #require(accepted.json["requestId"]?.stringValue)
        let payload = try JSONParser.parse(
            try #require(
                try DB.rows("SELECT payload FROM deliveries WHERE request_id = $1::uuid", [requestID]).first
            ).string(0))
        #expect(payload["aps"]?["sound"] == .string("chime.caf"))
        #expect(payload["aps"]?["interruption-level"] == .string("time-sensitive"))
        #expect(payload["aps"]?["thread-id"] == .string(partner.miniAppID))
    }

    @Test("every admin answer, errors and the console's JSON included, carries Cache-Control: no-store")
    func adminAnswersAreNotCached() throws {
        let partner = try intake.makePartner()
        let answers: [(String, TestHTTPClient.Response)] = [
            ("list", try intake.admin("GET", "/api/admin/mini-app-partners")),
            ("audit", try intake.admin("GET", "/api/admin/audit?partner=\(partner.id)")),
            ("bad body", try intake.admin("POST", "/api/admin/mini-app-partners", #"{"miniAppId":""}"#)),
            ("no token", try intake.request("GET", "/api/admin/mini-app-partners", token: nil)),
            ("partner key", try intake.request("GET", "/api/admin/audit", token: partner.key)),
            ("unknown id", try intake.admin("DELETE", "/api/admin/mini-app-partners/\(UUID())")),
            ("unknown path", try intake.admin("GET", "/api/admin/nothing-here")),
            ("wrong method", try intake.admin("PUT", "/api/admin/mini-app-partners")),
            ("console off", try intake.admin("GET", "/api/admin/console/overview")),
            ("console on", try ConsoleTests.console.admin("GET", "/api/admin/console/overview")),
        ]
        #expect(answers.map(\.1.status) == [200, 200, 400, 401, 401, 404, 404, 405, 404, 200])
        for (name, answer) in answers {
            #expect(answer.headers["cache-control"] == "no-store", "\(name): \(answer.status)")
        }
        // Partner answers hold no admin secret and are left to the usual caching rules.
        let status = try intake.request("GET", "/api/partners/notifications/push/\(UUID())", token: partner.key)
        #expect(status.status == 404)
        #expect(status.headers["cache-control"] == nil)
    }
}
