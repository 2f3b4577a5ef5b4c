import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Host API", .requiresDatabase)
struct HostAPITests {
    let intake = IntakeHarness.shared

    @Test("PUT user creates then replaces identifiers, stored lower-case")
    func putUser() throws {
        let tenant = TestEnvironment.unique("t")
        let id = TestEnvironment.unique("u")
        let wallet = "0x" + String(repeating: "AB", count: 20)
        let created = try intake.host(
            "PUT", "/api/internal/users/\(id)",
            #"{"tenantId":"\#(tenant)","emails":["A@X.io","a@x.io"],"wallets":["\#(wallet)"]}"#)
        #expect(created.status == 201)
        #expect(created.json["emails"] == .array([.string("a@x.io")]))
        #expect(created.json["wallets"] == .array([.string(wallet.lowercased())]))
        let replaced = try intake.host(
            "PUT", "/api/internal/users/\(id)", #"{"tenantId":"\#(tenant)","emails":["b@x.io"]}"#)
        #expect(replaced.status == 200)
        let emails = try DB.rows("SELECT email FROM user_emails WHERE user_id = $1", [id]).map { try $0.string(0) }
        #expect(emails == ["b@x.io"])
        #expect(try DB.count("SELECT count(*) FROM user_wallets WHERE user_id = $1", [id]) == 0)
    }

    @Test("an identifier held by another user of the tenant is 409; other tenants may reuse it")
    func identifierConflict() throws {
        let tenant = TestEnvironment.unique("t")
        let first = TestEnvironment.unique("u")
        let second = TestEnvironment.unique("u")
        #expect(
            try intake.host("PUT", "/api/internal/users/\(first)", #"{"tenantId":"\#(tenant)","emails":["s@x.io"]}"#)
                .status == 201)
        let conflict = try intake.host(
            "PUT", "/api/internal/users/\(second)", #"{"tenantId":"\#(tenant)","emails":["S@x.io"]}"#)
        #expect(conflict.status == 409)
        #expect(conflict.errorCode == "identifier_taken")
        #expect(try DB.count("SELECT count(*) FROM users WHERE id = $1", [second]) == 0)
        let elsewhere = try intake.host(
            "PUT", "/api/internal/users/\(second)",
            #"{"tenantId":"\#(TestEnvironment.unique("t"))","emails":["s@x.io"]}"#)
        #expect(elsewhere.status == 201)
    }

    @Test("device token health: each token's state, reason and since, never the token; a registration revives it")
    func deviceTokenHealth() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        let apns = String(repeating: "ef", count: 32)
        let start = String(repeating: "a1", count: 32)
        let fcm = "fcm-" + String(repeating: "x", count: 60)
        let phone = "/api/internal/users/\(user.id)/devices/phone"
        #expect(
            try intake.host(
                "PUT", phone,
                #"{"platform":"ios","environment":"production","apnsToken":"\#(apns)","apnsPushToStartToken":"\#(start)","bundleId":"com.example.app"}"#
            ).status == 201)
        #expect(
            try intake.host(
                "PUT", "/api/internal/users/\(user.id)/devices/pixel",
                #"{"platform":"android","environment":"production","fcmToken":"\#(fcm)"}"#
            ).status == 201)

        let fresh = try intake.host("GET", phone)
        #expect(fresh.status == 200)
        #expect(fresh.json["deviceId"] == .string("phone"))
        #expect(fresh.json["bundleId"] == .string("com.example.app"))
        #expect(fresh.json["apns"]?["state"] == .string("valid"))
        #expect(fresh.json["apns"]?["reason"] == .null)
        #expect(fresh.json["apnsPushToStart"]?["state"] == .string("valid"))
        #expect(fresh.json["fcm"]?["state"] == .string("absent"))
        #expect(fresh.json["registeredAt"]?.stringValue != nil)

        // APNs said Unregistered at a known time: the state says so, with that time.
        try DB.execute(
            """
            UPDATE devices SET apns_token_invalidated_at = '2026-11-30T10:00:00Z', apns_token_invalid_reason = 'Unregistered'
             WHERE user_id = $1 AND device_id = 'phone'
            """, [user.id])
        let dead = try intake.host("GET", phone)
        #expect(dead.json["apns"]?["state"] == .string("invalid"))
        #expect(dead.json["apns"]?["reason"] == .string("Unregistered"))
        #expect(dead.json["apns"]?["since"] == .string("2026-11-30T10:00:00.000Z"))
        #expect(dead.json["apnsPushToStart"]?["state"] == .string("valid"))

        let list = try intake.host("GET", "/api/internal/users/\(user.id)/devices")
        #expect(list.status == 200)
        #expect(list.json["devices"]?.arrayValue?.compactMap { $0["deviceId"]?.stringValue } == ["phone", "pixel"])
        #expect(list.json["devices"]?.arrayValue?.last?["fcm"]?["state"] == .string("valid"))
        for response in [fresh, dead, list] {
            for token in [apns, start, fcm] { #expect(!response.text.lowercased().contains(token)) }
        }

        // The app registered again (another environment this time): every token of the PUT is valid again.
        #expect(
            try intake.host(
                "PUT", phone,
                #"{"platform":"ios","environment":"sandbox","apnsToken":"\#(apns)","bundleId":"com.example.app"}"#
            ).status == 200)
        let revived = try intake.host("GET", phone)
        #expect(revived.json["apns"]?["state"] == .string("valid"))
        #expect(revived.json["apnsPushToStart"]?["state"] == .string("absent"))

        // A user without devices has an empty list; unknown users and devices are 404.
        let lonely = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        let empty = try intake.host("GET", "/api/internal/users/\(lonely.id)/devices")
        #expect(empty.status == 200 && empty.json["devices"] == .array([]))
        let nobody = try intake.host("GET", "/api/internal/users/\(TestEnvironment.unique("nobody"))/devices")
        #expect(nobody.status == 404 && nobody.errorCode == "user_not_found")
        #expect(try intake.host("GET", "/api/internal/users/\(user.id)/devices/tablet").status == 404)
        #expect(try intake.host("GET", "/api/internal/users/bad%20id/devices").status == 400)
        // Host token only.
        #expect(try intake.request("GET", phone, token: partner.key).status == 401)
    }

    @Test("devices: tokens validated per platform, never echoed; a registration clears an invalidation")
    func devices() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        let token = String(repeating: "ab", count: 32)
        let path = "/api/internal/users/\(user.id)/devices/phone"
        let created = try intake.host(
            "PUT", path, #"{"platform":"ios","environment":"sandbox","apnsToken":"\#(token.uppercased())"}"#)
        #expect(created.status == 201)
        #expect(!created.text.lowercased().contains(token))
        #expect(created.json["tokens"]?["apns"] == .bool(true))
        #expect(
            try DB.rows("SELECT apns_token, environment FROM devices WHERE user_id = $1", [user.id]).first?.string(0)
                == token)

        // The same token registered after its invalidation: the app is back on the phone.
        try DB.execute("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = $1", [user.id])
        #expect(
            try intake.host("PUT", path, #"{"platform":"ios","environment":"sandbox","apnsToken":"\#(token)"}"#).status
                == 200)
        #expect(
            try DB.count(
                "SELECT count(*) FROM devices WHERE user_id = $1 AND apns_token_invalidated_at IS NULL", [user.id]) == 1
        )
        try DB.execute("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = $1", [user.id])
        let fresh = String(repeating: "cd", count: 32)
        #expect(
            try intake.host("PUT", path, #"{"platform":"ios","environment":"sandbox","apnsToken":"\#(fresh)"}"#).status
                == 200)
        #expect(
            try DB.count(
                "SELECT count(*) FROM devices WHERE user_id = $1 AND apns_token_invalidated_at IS NULL", [user.id]) == 1
        )

        for bad in [
            #"{"platform":"ios","environment":"production","apnsToken":"xyz"}"#,
            #"{"platform":"ios","environment":"production"}"#,
            #"{"platform":"ios","environment":"staging","apnsToken":"\#(token)"}"#,
            #"{"platform":"android","environment":"production","apnsToken":"\#(token)","fcmToken":"short"}"#,
            #"{"platform":"windows","environment":"production"}"#,
            #"{"platform":"ios","environment":"production","fcmToken":"abcdefghijabcdefghijabcdefghijabcdefghij"}"#,
        ] {
            let response = try intake.host("PUT", "/api/internal/users/\(user.id)/devices/bad", bad)
            #expect(response.status == 400, "\(bad) -> \(response.text)")
        }
        #expect(try DB.count("SELECT count(*) FROM devices WHERE device_id = 'bad' AND user_id = $1", [user.id]) == 0)
        let unknownUser = try intake.host(
            "PUT", "/api/internal/users/\(TestEnvironment.unique("nobody"))/devices/d",
            #"{"platform":"ios","environment":"production","apnsToken":"\#(token)"}"#)
        #expect(unknownUser.status == 404)

        #expect(try intake.host("DELETE", path).status == 204)
        #expect(try intake.host("DELETE", path).status == 404)
    }

    @Test("sessions, opt-outs and the senders list")
    func sessionsAndOptOuts() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let session = try intake.host("PUT", "/api/internal/users/\(user.id)/mini-app-sessions/\(partner.miniAppID)")
        #expect(session.status == 200)
        #expect(session.json["lastSeenAt"]?.stringValue != nil)
        #expect(try DB.count("SELECT count(*) FROM mini_app_sessions WHERE user_id = $1", [user.id]) == 1)

        let empty = try intake.host("GET", "/api/internal/users/\(user.id)/mini-app-senders")
        #expect(empty.json["senders"] == .array([]))
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        let one = try intake.host("GET", "/api/internal/users/\(user.id)/mini-app-senders")
        #expect(one.json["senders"]?.arrayValue?.first?["optedOut"] == .bool(false))
        #expect(one.json["senders"]?.arrayValue?.first?["firstSentAt"]?.stringValue != nil)

        let optOut = "/api/internal/users/\(user.id)/opt-outs/\(partner.miniAppID)"
        #expect(try intake.host("PUT", optOut).status == 204)
        #expect(try intake.host("PUT", optOut).status == 204)
        #expect(
            try intake.host("GET", "/api/internal/users/\(user.id)/mini-app-senders")
                .json["senders"]?.arrayValue?.first?["optedOut"] == .bool(true))
        #expect(try intake.host("DELETE", optOut).status == 204)
        #expect(try DB.count("SELECT count(*) FROM opt_outs WHERE user_id = $1", [user.id]) == 0)

        let ghost = TestEnvironment.unique("ghost")
        #expect(try intake.host("GET", "/api/internal/users/\(ghost)/mini-app-senders").status == 404)
        #expect(try intake.host("PUT", "/api/internal/users/\(ghost)/opt-outs/\(partner.miniAppID)").status == 404)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(ghost)/mini-app-sessions/\(partner.miniAppID)").status == 404)
    }

    @Test("host routes need the host token, and bad ids are refused")
    func authenticationAndIDs() throws {
        let path = "/api/internal/users/u1"
        let body = #"{"tenantId":"t","emails":[]}"#
        #expect(try intake.request("PUT", path, token: nil, json: body).status == 401)
        #expect(try intake.request("PUT", path, token: IntakeHarness.adminToken, json: body).status == 401)
        let badID = try intake.host("PUT", "/api/internal/users/" + String(repeating: "x", count: 129), body)
        #expect(badID.status == 400)
        #expect(badID.errorField == "userId")
        #expect(try intake.host("PUT", path, #"{"tenantId":"t","emails":["not-an-email"]}"#).status == 400)
        #expect(try intake.host("PUT", path, #"{"emails":[]}"#).errorCode == "missing_field")
    }
}
