import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import ServiceSupport
import Testing

@testable import Intake

/// Edge cases at the intake: the TTL default, token ownership across users and tenants, text at the
/// edges (control characters, NFC emails) and the device environment.
@Suite("Intake edges")
struct EdgesTests {
    let intake = IntakeHarness.shared

    static let day = 24 * 3600.0

    /// The push's audit row and its deliveries' expiry, in seconds after the request's creation.
    func stored(_ requestID: String) throws -> (ttl: Int?, deliveries: [Double]) {
        let ttl = try DB.rows("SELECT ttl_seconds FROM push_requests WHERE id = $1::uuid", [requestID]).first?
            .optionalInt(0)
        let expiries = try DB.rows(
            """
            SELECT extract(epoch FROM expires_at - request_created_at)::float8 FROM deliveries
             WHERE request_id = $1::uuid
            """, [requestID]
        ).map { try $0.double(0) }
        return (ttl, expiries)
    }

    @Test("a push without ttlSeconds gets 28 days on every delivery; with it, its own")
    func ttlDefault() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let plain = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(plain.status == 202, "\(plain.text)")
        let defaulted = try stored(plain.json["requestId"]!.stringValue!)
        #expect(defaulted.ttl == 2_419_200)
        #expect(defaulted.deliveries.count == 2)
        for expiry in defaulted.deliveries { #expect(abs(expiry - 28 * Self.day) < 1) }

        let short = try intake.push(partner.key, pushBody(partner, emails: [user.email], extra: #","ttlSeconds":90"#))
        #expect(short.status == 202)
        let own = try stored(short.json["requestId"]!.stringValue!)
        #expect(own.ttl == 90)
        #expect(own.deliveries.count == 2)
        for expiry in own.deliveries { #expect(abs(expiry - 90) < 1) }

        for bad in ["0", "-1", "2419201", "1.5", "\"60\""] {
            let response = try intake.push(
                partner.key, pushBody(partner, emails: [user.email], extra: #","ttlSeconds":\#(bad)"#))
            #expect(response.status == 400, "\(bad)")
            #expect(response.errorField == "ttlSeconds")
        }
        let longest = try intake.push(
            partner.key, pushBody(partner, emails: [user.email], extra: #","ttlSeconds":2419200"#))
        #expect(longest.status == 202)
    }

    @Test("a scheduled push's TTL counts from its sendAt")
    func ttlFromSendAt() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let sendAt = Date().addingTimeInterval(3600)
        for (extra, ttl) in [(#","ttlSeconds":600"#, 600.0), ("", 28 * Self.day)] {
            let response = try intake.push(
                partner.key,
                pushBody(
                    partner, emails: [user.email], extra: #","sendAt":"\#(ISO8601.format(sendAt))"\#(extra)"#))
            #expect(response.status == 202, "\(response.text)")
            let id = response.json["requestId"]!.stringValue!
            let rows = try DB.rows(
                """
                SELECT extract(epoch FROM expires_at - available_at)::float8 FROM deliveries WHERE request_id = $1::uuid
                """, [id])
            #expect(rows.count == 1)
            #expect(abs(try rows[0].double(0) - ttl) < 0.01)
        }
    }

    @Test("HERALD_NOTIFY_INTERVAL_MS sets the NOTIFY interval, validated to 0-1000")
    func notifyIntervalSetting() throws {
        var environment = IntakeConfigurationTests.base
        #expect(
            try IntakeConfiguration.fromEnvironment(environment).notifyInterval
                == IntakeConfiguration(
                    databaseURL: "", adminToken: "", hostToken: "", signingKeys: [:], signingKeyID: ""
                ).notifyInterval)
        for (text, interval) in [("0", Duration.zero), ("1", .milliseconds(1)), ("1000", .seconds(1))] {
            environment["HERALD_NOTIFY_INTERVAL_MS"] = text
            #expect(try IntakeConfiguration.fromEnvironment(environment).notifyInterval == interval)
        }
        for bad in ["-1", "1001", "2ms"] {
            environment["HERALD_NOTIFY_INTERVAL_MS"] = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try IntakeConfiguration.fromEnvironment(environment) }
        }
    }

    @Test("HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS sets the handler queue's wait limit, validated to 0-60000")
    func queueWaitLimitSetting() throws {
        var environment = IntakeConfigurationTests.base
        #expect(try IntakeConfiguration.fromEnvironment(environment).queueWaitLimitMilliseconds == 1_000)
        for (text, limit) in [("0", 0), ("250", 250), ("60000", 60_000)] {
            environment["HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS"] = text
            #expect(try IntakeConfiguration.fromEnvironment(environment).queueWaitLimitMilliseconds == limit)
        }
        for bad in ["-1", "60001", "1s"] {
            environment["HERALD_INTAKE_QUEUE_WAIT_LIMIT_MS"] = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try IntakeConfiguration.fromEnvironment(environment) }
        }
    }

    @Test("HERALD_DEFAULT_TTL_SECONDS sets the default, validated to 1-2419200")
    func ttlSetting() throws {
        let base = IntakeConfigurationTests.base
        #expect(try IntakeConfiguration.fromEnvironment(base).rules.defaultTTLSeconds == 2_419_200)
        var custom = base
        custom["HERALD_DEFAULT_TTL_SECONDS"] = "3600"
        #expect(try IntakeConfiguration.fromEnvironment(custom).rules.defaultTTLSeconds == 3600)
        for bad in ["0", "2419201", "-5", "week"] {
            custom["HERALD_DEFAULT_TTL_SECONDS"] = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try IntakeConfiguration.fromEnvironment(custom) }
        }

        let shortIntake = try IntakeHarness(configure: { $0.rules.defaultTTLSeconds = 3600 })
        defer { shortIntake.stop() }
        let partner = try shortIntake.makePartner()
        let user = try shortIntake.makeUser(tenant: partner.tenantID)
        let response = try shortIntake.push(partner.key, pushBody(partner, emails: [user.email]))
        let saved = try stored(response.json["requestId"]!.stringValue!)
        #expect(saved.ttl == 3600)
        for expiry in saved.deliveries { #expect(abs(expiry - 3600) < 1) }
    }

    @Test("a phone that changes accounts: the old user and tenant no longer reach it, the new one does")
    func tokenMovesAcrossTenants() throws {
        let oldPartner = try intake.makePartner()
        let newPartner = try intake.makePartner()
        let oldUser = try intake.makeUser(tenant: oldPartner.tenantID)
        let newUser = try intake.makeUser(tenant: newPartner.tenantID, ios: false, android: false)
        // The same phone (its APNs and FCM tokens) signs in as the new user.
        let ios = try intake.host(
            "PUT", "/api/internal/users/\(newUser.id)/devices/phone",
            #"{"platform":"ios","environment":"production","apnsToken":"\#(oldUser.apnsToken)"}"#)
        #expect(ios.status == 201)
        let android = try intake.host(
            "PUT", "/api/internal/users/\(newUser.id)/devices/tablet",
            #"{"platform":"android","environment":"production","fcmToken":"\#(oldUser.fcmToken)"}"#)
        #expect(android.status == 201)

        let toOld = try intake.push(oldPartner.key, pushBody(oldPartner, emails: [oldUser.email]))
        #expect(toOld.status == 202)
        #expect(toOld.json["recipients"] == .number(1))
        #expect(toOld.json["deliveries"] == .number(0))
        let toNew = try intake.push(newPartner.key, pushBody(newPartner, emails: [newUser.email]))
        #expect(toNew.json["deliveries"] == .number(2))
        #expect(
            try DB.count(
                "SELECT count(*) FROM devices WHERE apns_token = $1 OR fcm_token = $2",
                [oldUser.apnsToken, oldUser.fcmToken]) == 2)
        #expect(
            try DB.count(
                "SELECT count(*) FROM devices WHERE user_id = $1 AND (apns_token IS NOT NULL OR fcm_token IS NOT NULL)",
                [oldUser.id]) == 0)
    }

    @Test("control characters anywhere in a push are 400 naming the field, and write nothing")
    func controlCharactersInPush() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let recipients = #""recipients":{"emails":["\#(user.email)"]}"#
        let cases: [(String, String)] = [
            (#"{\#(recipients),"title":"a\u0000b"}"#, "title"),
            (#"{\#(recipients),"title":"a\u001bb"}"#, "title"),
            (#"{\#(recipients),"title":"a\u007fb"}"#, "title"),
            (#"{\#(recipients),"title":"a\u0085b"}"#, "title"),
            (#"{\#(recipients),"title":"line\nbreak"}"#, "title"),
            (#"{\#(recipients),"title":"t","body":"a\u0000b"}"#, "body"),
            (#"{\#(recipients),"title":"t","body":"bell\u0007"}"#, "body"),
            (#"{\#(recipients),"title":"t","data":{"k\u0000":"v"}}"#, "data"),
            (#"{\#(recipients),"title":"t","data":{"k":"v\u0000"}}"#, "data.k"),
            (#"{\#(recipients),"title":"t","data":{"k":"two\nlines"}}"#, "data.k"),
            (#"{\#(recipients),"title":"t","data":{"k":"\u202eevil"}}"#, "data.k"),
            (#"{"recipients":{"emails":["a\u0000@x.io"]},"title":"t"}"#, "recipients.emails[0]"),
            (#"{\#(recipients),"title":"t","deepLink":"\#(partner.deepLinkRoot)/\u0000"}"#, "deepLink"),
        ]
        for (body, field) in cases {
            let response = try intake.push(partner.key, body)
            #expect(response.status == 400, "\(body) -> \(response.text)")
            #expect(response.errorField == field, "\(body)")
        }
        // A lone surrogate cannot become a Swift string: the parser refuses it as invalid JSON.
        for body in [#"{\#(recipients),"title":"a\ud800b"}"#, #"{\#(recipients),"title":"t","data":{"k":"\udc00"}}"#] {
            let response = try intake.push(partner.key, body)
            #expect(response.status == 400, "\(body) -> \(response.text)")
            #expect(response.errorCode == "invalid_json")
        }
        #expect(try DB.writes(partnerID: partner.id) == 0)
        // Newlines and tabs are fine in a body.
        let prose = try intake.push(partner.key, #"{\#(recipients),"title":"t","body":"one\ntwo\tthree\r\n"}"#)
        #expect(prose.status == 202, "\(prose.text)")
    }

    @Test("control characters in host and admin strings are 400 naming the field")
    func controlCharactersElsewhere() throws {
        let tenant = TestEnvironment.unique("t")
        let user = TestEnvironment.unique("u")
        let hostCases: [(String, String, String)] = [
            ("/api/internal/users/\(user)", #"{"tenantId":"t\u0000","emails":[]}"#, "tenantId"),
            (
                "/api/internal/users/\(user)", #"{"tenantId":"\#(tenant)","emails":["a@b.io","x\u0000@y.io"]}"#,
                "emails[1]"
            ),
            ("/api/internal/users/\(user)", #"{"tenantId":"\#(tenant)","emails":["x\u2028@y.io"]}"#, "emails[0]"),
        ]
        for (path, body, field) in hostCases {
            let response = try intake.host("PUT", path, body)
            #expect(response.status == 400, "\(body) -> \(response.text)")
            #expect(response.errorField == field)
        }
        #expect(try DB.count("SELECT count(*) FROM users WHERE id = $1", [user]) == 0)

        let adminCases: [(String, String)] = [
            (#"{"miniAppId":"a.b\#(UUID().uuidString.prefix(6))","displayName":"Pu\u0000ll"}"#, "displayName"),
            (#"{"miniAppId":"a.b\#(UUID().uuidString.prefix(6))","displayName":"Pull\u200f"}"#, "displayName"),
            (#"{"miniAppId":"a\u0000b","displayName":"Pull"}"#, "miniAppId"),
            (
                #"{"miniAppId":"a.b\#(UUID().uuidString.prefix(6))","displayName":"Pull","iconUrl":"https://x.io/\u0000"}"#,
                "iconUrl"
            ),
            (
                #"{"miniAppId":"a.b\#(UUID().uuidString.prefix(6))","displayName":"Pull","iconUrl":"https://x.io/é"}"#,
                "iconUrl"
            ),
        ]
        for (body, field) in adminCases {
            let response = try intake.admin("POST", "/api/admin/mini-app-partners", body)
            #expect(response.status == 400, "\(body) -> \(response.text)")
            #expect(response.errorField == field)
        }
    }

    @Test("an email the host registered decomposed matches the composed form a partner sends, and vice versa")
    func emailsInNFC() throws {
        let partner = try intake.makePartner()
        let decomposedUser = TestEnvironment.unique("u")
        let composedUser = TestEnvironment.unique("u")
        let local = TestEnvironment.unique("x")
        // JSON escapes, so the bytes on the wire are exactly the form named.
        let decomposed = #"r\u0065\u0301my-\#(local)@example.com"#
        let composed = #"r\u00e9my-\#(local)@example.com"#
        let otherDecomposed = #"Jos\u0045\u0301-\#(local)@example.com"#
        let otherComposed = #"jos\u00e9-\#(local)@example.com"#
        for (user, email) in [(decomposedUser, decomposed), (composedUser, otherComposed)] {
            let created = try intake.host(
                "PUT", "/api/internal/users/\(user)",
                #"{"tenantId":"\#(partner.tenantID)","emails":["\#(email)"]}"#)
            #expect(created.status == 201, "\(created.text)")
            _ = try intake.host(
                "PUT", "/api/internal/users/\(user)/devices/iphone",
                #"{"platform":"ios","environment":"production","apnsToken":"\#(Digest.hex(try SecureRandom.bytes(32)))"}"#
            )
        }
        let stored = try DB.rows("SELECT email FROM user_emails WHERE user_id = $1", [decomposedUser])
        #expect(
            try stored.first?.string(0).unicodeScalars.map(\.value)
                == "rémy-\(local)@example.com".precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value))

        // Composed from the partner finds the decomposed registration; decomposed (and upper
        // case) finds the composed one.
        let push = try intake.push(
            partner.key, #"{"recipients":{"emails":["\#(composed)","\#(otherDecomposed)"]},"title":"t"}"#)
        #expect(push.status == 202, "\(push.text)")
        #expect(push.json["recipients"] == .number(2))
        #expect(push.json["deliveries"] == .number(2))
        #expect(push.json["missing"]?["emails"] == .array([]))

        // And the host cannot give the other form of a held address to another user.
        let clash = try intake.host(
            "PUT", "/api/internal/users/\(TestEnvironment.unique("u"))",
            #"{"tenantId":"\#(partner.tenantID)","emails":["\#(composed)"]}"#)
        #expect(clash.status == 409)
    }

    @Test("an unknown device environment is 400 naming environment, never production")
    func unknownEnvironment() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        let token = Digest.hex(try SecureRandom.bytes(32))
        for environment in [
            #""staging""#, #""Production""#, #""production ""#, #""""#, "null", "1", #""sandbox\u0000""#,
        ] {
            let response = try intake.host(
                "PUT", "/api/internal/users/\(user.id)/devices/d1",
                #"{"platform":"ios","environment":\#(environment),"apnsToken":"\#(token)"}"#)
            #expect(response.status == 400, "\(environment) -> \(response.text)")
            #expect(response.errorField == "environment", "\(environment)")
        }
        #expect(try DB.count("SELECT count(*) FROM devices WHERE user_id = $1", [user.id]) == 0)
    }

    @Test("a revoked partner cannot be edited (409), like its key")
    func revokedPartnerIsNotEditable() throws {
        let partner = try intake.makePartner()
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)").status == 200)
        let patched = try intake.admin("PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"displayName":"New"}"#)
        #expect(patched.status == 409)
        #expect(patched.errorCode == "partner_revoked")
        #expect(
            try DB.rows("SELECT display_name FROM partners WHERE id = $1::uuid", [partner.id]).first?.string(0)
                == "Pull")
    }
}
