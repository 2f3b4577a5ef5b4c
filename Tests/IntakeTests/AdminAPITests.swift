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
        let response = try intake.admin("POST", "/api/admin/mini-app-partners",
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

        let duplicate = try intake.admin("POST", "/api/admin/mini-app-partners",
                                         #"{"miniAppId":"\#(miniAppID)","displayName":"Again"}"#)
        #expect(duplicate.status == 409)
        #expect(duplicate.errorCode == "mini_app_taken")
    }

    @Test("admin input is validated and nothing is written", arguments: [
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
        let response = try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)",
                                        #"{"displayName":"Pull Pro","rateLimitPerDay":500,"iconUrl":null}"#)
        #expect(response.status == 200)
        #expect(response.json["displayName"] == .string("Pull Pro"))
        #expect(response.json["rateLimitPerDay"] == .number(500))
        #expect(response.json["iconUrl"] == .null)
        Thread.sleep(forTimeInterval: 2.1)
        let push = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        let requestID = try #require(push.json["requestId"]?.stringValue)
        let title = try DB.rows("SELECT title FROM push_requests WHERE id = $1::uuid", [requestID]).first?.string(0)
        #expect(title == "[Pull Pro] Deposit pending")
        #expect(try intake.admin("PATCH", "/api/admin/mini-app-partners/\(UUID())", #"{"displayName":"X"}"#).status == 404)
        #expect(try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"miniAppId":"x"}"#).status == 400)
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
        #expect(try other.request("POST", "/api/partners/notifications/push", token: partner.key, json: body).status == 202)

        let revoked = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)")
        #expect(revoked.status == 200)
        #expect(revoked.json["revokedAt"] != .null)
        let start = Date()
        var refusedEverywhere = false
        while Date().timeIntervalSince(start) < 5 {
            let here = try intake.push(partner.key, body).status
            let there = try other.request("POST", "/api/partners/notifications/push", token: partner.key, json: body).status
            if here == 401 && there == 401 { refusedEverywhere = true; break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(refusedEverywhere)
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
        let deadline = Date().addingTimeInterval(5)
        var oldStatus = 0
        while Date() < deadline {
            oldStatus = try intake.push(partner.key, pushBody(partner, emails: [user.email])).status
            if oldStatus == 401 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(oldStatus == 401)
        #expect(try intake.admin("POST", "/api/admin/mini-app-partners/\(UUID())/rotate-key").status == 404)
    }
}
