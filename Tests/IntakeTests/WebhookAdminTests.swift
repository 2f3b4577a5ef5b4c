import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The admin side of delivery webhooks: the URL on create and PATCH, the secret shown once and
/// rotatable (with an overlap while the old one still signs), never in a listing.
@Suite("Webhook settings", .requiresDatabase)
struct WebhookAdminTests {
    let intake = IntakeHarness.shared

    static func isSecret(_ value: JSONValue?) -> Bool {
        guard let text = value?.stringValue, text.hasPrefix("whsec_") else { return false }
        return text.count == 70 && text.dropFirst(6).allSatisfy { "0123456789abcdef".contains($0) }
    }

    func stored(_ id: String) throws -> (url: String?, secret: String?) {
        let row = try #require(
            try DB.rows("SELECT webhook_url, webhook_secret FROM partners WHERE id = $1::uuid", [id]).first)
        return (row.optionalString(0), row.optionalString(1))
    }

    @Test("create with webhookUrl: the secret once in the answer, stored, never listed")
    func create() throws {
        let miniAppID = TestEnvironment.unique("hook").replacingOccurrences(of: "-", with: ".")
        let created = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Pull","webhookUrl":"https://hooks.example.com/herald"}"#)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json["webhookUrl"] == .string("https://hooks.example.com/herald"))
        #expect(Self.isSecret(created.json["webhookSecret"]))
        let id = try #require(created.json["id"]?.stringValue)
        let secret = try #require(created.json["webhookSecret"]?.stringValue)
        #expect(try stored(id) == ("https://hooks.example.com/herald", secret))
        let plain = try intake.makePartner()
        let list = try intake.admin("GET", "/api/admin/mini-app-partners")
        #expect(!list.text.contains(secret))
        #expect(list.text.contains("https://hooks.example.com/herald"))
        let listed = list.json["partners"]?.arrayValue?.first { $0["id"] == .string(plain.id) }
        #expect(listed?["webhookUrl"] == .null)
        #expect(listed?["webhookSecret"] == nil)
    }

    @Test("PATCH: every new URL gets a new secret, shown once, the same URL keeps it, null removes both")
    func patch() throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)"
        let first = try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
        #expect(first.status == 200)
        #expect(Self.isSecret(first.json["webhookSecret"]))
        let secret = try #require(first.json["webhookSecret"]?.stringValue)
        let same = try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
        #expect(same.status == 200 && same.json["webhookSecret"] == nil)
        #expect(try stored(partner.id) == ("https://a.example.com/h", secret))
        let moved = try intake.admin("PATCH", path, #"{"webhookUrl":"https://b.example.com/h"}"#)
        #expect(moved.status == 200 && Self.isSecret(moved.json["webhookSecret"]))
        let newSecret = try #require(moved.json["webhookSecret"]?.stringValue)
        #expect(newSecret != secret)
        #expect(try stored(partner.id) == ("https://b.example.com/h", newSecret))
        let other = try intake.admin("PATCH", path, #"{"displayName":"Pull 2"}"#)
        #expect(other.json["webhookUrl"] == .string("https://b.example.com/h"))
        let removed = try intake.admin("PATCH", path, #"{"webhookUrl":null}"#)
        #expect(removed.status == 200 && removed.json["webhookUrl"] == .null)
        #expect(try stored(partner.id) == (nil, nil))
    }

    @Test("rotate-webhook-secret: a new secret once; 409 without a webhook or once revoked; 404 unknown")
    func rotate() throws {
        let partner = try intake.makePartner()
        let rotatePath = "/api/admin/mini-app-partners/\(partner.id)/rotate-webhook-secret"
        let none = try intake.admin("POST", rotatePath)
        #expect(none.status == 409 && none.errorCode == "no_webhook")
        let set = try intake.admin(
            "PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"webhookUrl":"https://a.example.com/h"}"#)
        let old = try #require(set.json["webhookSecret"]?.stringValue)
        let rotated = try intake.admin("POST", rotatePath)
        #expect(rotated.status == 200)
        let new = try #require(rotated.json["webhookSecret"]?.stringValue)
        #expect(Self.isSecret(rotated.json["webhookSecret"]) && new != old)
        #expect(try stored(partner.id).secret == new)
        #expect(try intake.request("POST", rotatePath, token: partner.key).status == 401)
        #expect(try intake.admin("POST", "/api/admin/mini-app-partners/\(UUID())/rotate-webhook-secret").status == 404)
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)").status == 200)
        let revoked = try intake.admin("POST", rotatePath)
        #expect(revoked.status == 409 && revoked.errorCode == "partner_revoked")
    }

    func previous(_ id: String) throws -> (secret: String?, expiresAt: Date?) {
        let row = try #require(
            try DB.rows(
                """
                SELECT previous_webhook_secret, previous_webhook_secret_expires_at FROM partners WHERE id = $1::uuid
                """, [id]
            ).first)
        return (row.optionalString(0), try row.optionalDate(1))
    }

    @Test("rotate with previousSecretValidSeconds: the old secret signs until its end; the DELETE ends that at once")
    func rotateWithOverlap() throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)"
        let set = try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
        let first = try #require(set.json["webhookSecret"]?.stringValue)
        #expect(set.json["previousWebhookSecretExpiresAt"] == .null)
        let before = Date()
        let rotated = try intake.admin(
            "POST", path + "/rotate-webhook-secret",
            #"{"previousSecretValidSeconds":3600}"#)
        #expect(rotated.status == 200, "\(rotated.text)")
        let second = try #require(rotated.json["webhookSecret"]?.stringValue)
        let until = try #require(rotated.json["previousWebhookSecretExpiresAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(until.timeIntervalSince(before) - 3_600) < 60)
        #expect(try stored(partner.id).secret == second)
        #expect(try previous(partner.id).secret == first)
        let listed = try intake.admin("GET", "/api/admin/mini-app-partners").json["partners"]?.arrayValue?
            .first { $0["id"] == .string(partner.id) }
        #expect(listed?["previousWebhookSecretExpiresAt"] == rotated.json["previousWebhookSecretExpiresAt"])
        // One previous secret at most: rotating again keeps the one just replaced, not the first.
        let again = try intake.admin("POST", path + "/rotate-webhook-secret", #"{"previousSecretValidSeconds":60}"#)
        #expect(again.status == 200)
        #expect(try previous(partner.id).secret == second)

        let ended = try intake.admin("DELETE", path + "/previous-webhook-secret")
        #expect(ended.status == 200, "\(ended.text)")
        #expect(ended.json["previousWebhookSecretExpiresAt"] == .null && ended.json["webhookSecret"] == nil)
        #expect(try previous(partner.id) == (nil, nil))
        #expect(try intake.admin("DELETE", path + "/previous-webhook-secret").status == 200, "nothing to end is fine")
        // No body, and null, stop the old secret at once.
        for body in [nil, #"{"previousSecretValidSeconds":null}"#, #"{"previousSecretValidSeconds":0}"#] {
            let atOnce = try intake.admin("POST", path + "/rotate-webhook-secret", body)
            #expect(atOnce.status == 200 && atOnce.json["previousWebhookSecretExpiresAt"] == .null, "\(atOnce.text)")
            #expect(try previous(partner.id) == (nil, nil))
        }

        #expect(try intake.request("DELETE", path + "/previous-webhook-secret", token: partner.key).status == 401)
        let unknown = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(UUID())/previous-webhook-secret")
        #expect(unknown.status == 404)
        #expect(try intake.admin("DELETE", path).status == 200)
        let revoked = try intake.admin("DELETE", path + "/previous-webhook-secret")
        #expect(revoked.status == 409 && revoked.errorCode == "partner_revoked")
    }

    @Test(
        "a bad previousSecretValidSeconds is 400 naming the field, and nothing changes",
        arguments: [
            #"{"previousSecretValidSeconds":-1}"#, #"{"previousSecretValidSeconds":604801}"#,
            #"{"previousSecretValidSeconds":"3600"}"#, #"{"previousSecretValidSeconds":1.5}"#,
            #"{"previousSecretValidSeconds":true}"#,
        ])
    func badOverlap(_ body: String) throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)"
        let secret = try #require(
            try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
                .json["webhookSecret"]?.stringValue)
        let refused = try intake.admin("POST", path + "/rotate-webhook-secret", body)
        #expect(refused.status == 400 && refused.errorCode == "invalid_field", "\(refused.text)")
        #expect(refused.json["error"]?["field"] == .string("previousSecretValidSeconds"))
        #expect(try stored(partner.id).secret == secret)
        #expect(try previous(partner.id) == (nil, nil))
        let unknown = try intake.admin("POST", path + "/rotate-webhook-secret", #"{"previousKeyValidSeconds":60}"#)
        #expect(unknown.status == 400 && unknown.json["error"]?["field"] == .string("previousKeyValidSeconds"))
    }

    @Test("a new webhookUrl, or none, ends the overlap at once")
    func patchEndsOverlap() throws {
        let partner = try intake.makePartner()
        let path = "/api/admin/mini-app-partners/\(partner.id)"
        _ = try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
        _ = try intake.admin("POST", path + "/rotate-webhook-secret", #"{"previousSecretValidSeconds":3600}"#)
        let same = try intake.admin("PATCH", path, #"{"webhookUrl":"https://a.example.com/h"}"#)
        #expect(same.json["previousWebhookSecretExpiresAt"]?.stringValue != nil, "the same URL keeps the overlap")
        let moved = try intake.admin("PATCH", path, #"{"webhookUrl":"https://b.example.com/h"}"#)
        #expect(moved.status == 200 && moved.json["previousWebhookSecretExpiresAt"] == .null)
        #expect(try previous(partner.id) == (nil, nil))
        _ = try intake.admin("POST", path + "/rotate-webhook-secret", #"{"previousSecretValidSeconds":3600}"#)
        let removed = try intake.admin("PATCH", path, #"{"webhookUrl":null}"#)
        #expect(removed.status == 200 && removed.json["previousWebhookSecretExpiresAt"] == .null)
        #expect(try stored(partner.id) == (nil, nil))
        #expect(try previous(partner.id) == (nil, nil))
    }

    @Test(
        "webhookUrl must be https, and nothing is written otherwise",
        arguments: [
            "http://hooks.example.com/h", "hooks.example.com", "https://", "https://a b/", "ftp://x/y", "",
        ])
    func invalid(_ url: String) throws {
        let miniAppID = TestEnvironment.unique("bad").replacingOccurrences(of: "-", with: ".")
        let created = try intake.admin(
            "POST", "/api/admin/mini-app-partners",
            #"{"miniAppId":"\#(miniAppID)","displayName":"Pull","webhookUrl":"\#(url)"}"#)
        #expect(created.status == 400 && created.errorCode == "invalid_field")
        #expect(created.json["error"]?["field"] == .string("webhookUrl"))
        #expect(try DB.count("SELECT count(*) FROM partners WHERE mini_app_id = $1", [miniAppID]) == 0)
        let partner = try intake.makePartner()
        let patched = try intake.admin(
            "PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"webhookUrl":"\#(url)"}"#)
        #expect(patched.status == 400)
        #expect(try stored(partner.id) == (nil, nil))
    }
}
