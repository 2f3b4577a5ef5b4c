import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Testing

@Suite("POST /api/partners/notifications/push", .requiresDatabase)
struct PushEndpointTests {
    let intake = IntakeHarness.shared

    @Test("accepts a push, writes the audit row and one delivery per live device, answers after commit")
    func acceptedPush() throws {
        let partner = try intake.makePartner()
        let alice = try intake.makeUser(tenant: partner.tenantID)
        let response = try intake.push(partner.key, pushBody(partner, emails: [alice.email.uppercased()]))
        #expect(response.status == 202)
        let json = response.json
        #expect(json["status"] == .string("queued"))
        #expect(json["recipients"] == .number(1))
        #expect(json["deliveries"] == .number(2))
        #expect(json["suppressed"] == .number(0))
        #expect(json["sent"] == .number(0))
        #expect(json["failed"] == .number(0))
        #expect(json["missing"] == .object([("emails", .array([])), ("wallets", .array([]))]))
        let requestID = try #require(json["requestId"]?.stringValue)

        // Committed before the answer: visible to any other connection at once.
        let audit = try DB.rows(
            "SELECT title, recipients, deliveries, suppressed, sent, failed, lane FROM push_requests WHERE id = $1::uuid",
            [requestID])
        #expect(audit.count == 1)
        #expect(try audit[0].string(0) == "[Pull] Deposit pending")
        #expect(try audit[0].int(2) == 2)
        let services = try DB.rows(
            "SELECT service, state, attempts, lane FROM deliveries WHERE request_id = $1::uuid ORDER BY service",
            [requestID])
        #expect(try services.map { try $0.string(0) } == ["apns", "fcm"])
        #expect(try services.allSatisfy { try $0.string(1) == "pending" && $0.int(2) == 0 && $0.int(3) == 0 })
    }

    @Test("delivery ids are UUIDv7 of the request's millisecond: the outbox's key grows at its right edge")
    func deliveryIDsAreTimeOrdered() throws {
        let partner = try intake.makePartner()
        let single = try intake.makeUser(tenant: partner.tenantID, android: false)  // the group-commit path
        let both = try intake.makeUser(tenant: partner.tenantID)  // two devices: the batch's two slots
        let three = try intake.makeUser(tenant: partner.tenantID, tablet: true)  // the two-round-trip path
        for user in [single, both, three] {
            let response = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
            let requestID = try #require(response.json["requestId"]?.stringValue)
            let request = try #require(UUID(uuidString: requestID))
            let requestTime = try #require(UUIDv7.timestamp(of: request))
            let rows = try DB.rows("SELECT id FROM deliveries WHERE request_id = $1::uuid", [requestID])
            #expect(rows.count == (user.id == single.id ? 1 : user.id == both.id ? 2 : 3))
            for row in rows {
                let id = try #require(UUID(uuidString: try row.string(0)))
                #expect(UUIDv7.timestamp(of: id) == requestTime)
            }
        }
    }

    @Test("stored payloads carry the prefixed title, host fields, the delivery id and a valid signature")
    func storedPayloads() throws {
        let partner = try intake.makePartner(displayName: "Pull")
        // Before the partner's first push, so no cached profile predates the icon.
        let icon = try intake.raw(
            "PUT", "/api/admin/mini-app-partners/\(partner.id)/icon", token: IntakeHarness.adminToken,
            type: "image/svg+xml", body: IconSamples.wideSVG)
        #expect(icon.status == 200)
        let user = try intake.makeUser(tenant: partner.tenantID)
        let response = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        let requestID = try #require(response.json["requestId"]?.stringValue)
        let rows = try DB.rows("SELECT id, service, payload FROM deliveries WHERE request_id = $1::uuid", [requestID])
        #expect(rows.count == 2)
        for row in rows {
            let deliveryID = try row.string(0)
            let payload = try JSONParser.parse(try row.string(2))
            var fields: [(key: String, value: String)] = []
            if try row.string(1) == "apns" {
                #expect(payload["aps"]?["alert"]?["title"] == .string("[Pull] Deposit pending"))
                #expect(payload["aps"]?["mutable-content"] == .number(1))
                #expect(payload["isGroup"] == .bool(true))
                fields.append(("title", payload["aps"]!["alert"]!["title"]!.stringValue!))
                fields.append(("body", payload["aps"]!["alert"]!["body"]!.stringValue!))
                fields.append(("isGroup", "true"))
                for member in payload.objectMembers! where !["aps", "isGroup", "sig", "kid"].contains(member.key) {
                    fields.append((member.key, member.value.stringValue!))
                }
                verifySignature(payload, fields: fields)
                #expect(payload["deliveryId"] == .string(deliveryID))
                #expect(payload["channel"] == .string("mini-app"))
                #expect(payload["miniAppId"] == .string(partner.miniAppID))
                #expect(payload["senderName"] == .string("Pull"))
                #expect(payload["imageUrl"] == .string("\(IntakeHarness.publicURL)/icons/\(partner.miniAppID)/256.png"))
                #expect(payload["txHash"] == .string("0x123"))
            } else {
                let data = try #require(payload["data"])
                #expect(payload["android"]?["priority"] == .string("HIGH"))
                #expect(data["title"] == .string("[Pull] Deposit pending"))
                #expect(data["isGroup"] == .string("true"))
                #expect(data["deliveryId"] == .string(deliveryID))
                for member in data.objectMembers! where !["sig", "kid"].contains(member.key) {
                    fields.append((member.key, member.value.stringValue!))
                }
                verifySignature(data, fields: fields)
            }
        }
    }

    @Test(
        "stored APNs payloads carry thread-id, the partner's sound and the push's interruption level; FCM none",
        arguments: [
            (#""sound":"chime.caf","allowTimeSensitive":true"#, "time-sensitive" as String?, "chime.caf" as String?),
            (#""sound":null"#, "passive", nil),
            ("", "active", "default"),
            ("", nil, "default"),
        ])
    func storedPresentationKeys(_ partnerFields: String, _ level: String?, _ sound: String?) throws {
        let fields = try JSONParser.parse("{\(partnerFields)}").objectMembers ?? []
        let partner = try intake.makePartner(extra: fields)
        let user = try intake.makeUser(tenant: partner.tenantID)
        let extra = level.map { #","interruptionLevel":"\#($0)""# } ?? ""
        let response = try intake.push(partner.key, pushBody(partner, emails: [user.email], extra: extra))
        #expect(response.status == 202, "\(response.text)")
        let requestID = try #require(response.json["requestId"]?.stringValue)
        let rows = try DB.rows("SELECT service, payload FROM deliveries WHERE request_id = $1::uuid", [requestID])
        #expect(rows.count == 2)
        for row in rows {
            let payload = try JSONParser.parse(try row.string(1))
            if try row.string(0) == "apns" {
                let aps = try #require(payload["aps"])
                #expect(aps["thread-id"] == .string(partner.miniAppID))
                #expect(aps["sound"] == sound.map { .string($0) })
                #expect(aps["interruption-level"] == (level == "active" ? nil : level.map { .string($0) }))
            } else {
                let keys = try #require(payload["data"]?.objectMembers).map(\.key)
                let apnsOnly = ["thread-id", "threadId", "sound", "interruption-level", "interruptionLevel"]
                #expect(!keys.contains { apnsOnly.contains($0) })
            }
        }
    }

    @Test("a listed category reaches aps.category and the FCM data on every write path; another is refused")
    func categories() throws {
        let categorized = try IntakeHarness(configure: {
            $0.rules.notificationCategories = try! NotificationCategories(parsing: "INVITE,reply.quick")
        })
        defer { categorized.stop() }
        let partner = try categorized.makePartner()
        let one = try categorized.makeUser(tenant: partner.tenantID, android: false)  // the group-commit path
        let three = try categorized.makeUser(tenant: partner.tenantID, tablet: true)  // the two-round-trip path
        for user in [one, three] {
            let response = try categorized.push(
                partner.key, pushBody(partner, emails: [user.email], extra: #","category":"reply.quick""#))
            #expect(response.status == 202, "\(response.text)")
            let requestID = try #require(response.json["requestId"]?.stringValue)
            let rows = try DB.rows("SELECT service, payload FROM deliveries WHERE request_id = $1::uuid", [requestID])
            #expect(rows.count == (user.id == one.id ? 1 : 3))
            for row in rows {
                let payload = try JSONParser.parse(try row.string(1))
                if try row.string(0) == "apns" {
                    #expect(payload["aps"]?["category"] == .string("reply.quick"))
                    #expect(payload["category"] == nil)
                } else {
                    #expect(payload["data"]?["category"] == .string("reply.quick"))
                }
            }
        }
        let recipients = #"{"recipients":{"emails":["\#(one.email)"]},"title":"t""#
        for (body, code, field) in [
            (#","category":"REPLY.QUICK"}"#, "unknown_category", "category"),
            (#","category":"accept"}"#, "unknown_category", "category"),
            (#","category":["INVITE"]}"#, "invalid_field", "category"),
            (#","category":"INVITE","data":{"Category":"INVITE"}}"#, "invalid_field", "data.Category"),
        ] {
            let before = try DB.writes(partnerID: partner.id)
            let response = try categorized.push(partner.key, recipients + body)
            #expect(response.status == 400, "\(body): \(response.text)")
            #expect(response.errorCode == code && response.errorField == field, "\(body)")
            #expect(try DB.writes(partnerID: partner.id) == before, "\(body)")
        }
        let refused = try categorized.push(
            partner.key, pushBody(partner, emails: [one.email], extra: #","category":"accept""#))
        #expect(refused.json["error"]?["message"]?.stringValue?.contains("INVITE, reply.quick") == true)
    }

    @Test("time-sensitive from a partner allowed it is accepted on every write path")
    func timeSensitiveAllowed() throws {
        let partner = try intake.makePartner(extra: [("allowTimeSensitive", .bool(true))])
        let one = try intake.makeUser(tenant: partner.tenantID, android: false)  // the group-commit path
        let three = try intake.makeUser(tenant: partner.tenantID, tablet: true)  // the two-round-trip path
        for user in [one, three] {
            let response = try intake.push(
                partner.key,
                pushBody(
                    partner, emails: [user.email],
                    extra: #","interruptionLevel":"time-sensitive""#))
            #expect(response.status == 202, "\(response.text)")
            let requestID = try #require(response.json["requestId"]?.stringValue)
            let levels = try DB.rows(
                """
                SELECT payload::jsonb -> 'aps' ->> 'interruption-level' FROM deliveries
                 WHERE request_id = $1::uuid AND service = 'apns'
                """, [requestID]
            ).map { $0.optionalString(0) }
            #expect(levels == Array(repeating: "time-sensitive", count: user.id == one.id ? 1 : 2))
        }
    }

    private func verifySignature(_ payload: JSONValue, fields: [(key: String, value: String)]) {
        #expect(payload["kid"] == .string(IntakeHarness.signingKeyID))
        let expected = Base64URL.encode(
            Digest.hmacSHA256(
                key: IntakeHarness.signingKey, message: SignedEnvelope.canonicalBytes(fields)))
        #expect(payload["sig"] == .string(expected))
    }

    @Test("recipients resolve only inside the partner's tenant, case-insensitively; others are missing")
    func tenantScoping() throws {
        let partner = try intake.makePartner()
        let mine = try intake.makeUser(tenant: partner.tenantID)
        let foreign = try intake.makeUser(tenant: TestEnvironment.unique("other"))
        let response = try intake.push(
            partner.key,
            pushBody(
                partner, emails: [mine.email.lowercased(), foreign.email, "nobody@example.com"],
                wallets: [mine.wallet.lowercased(), foreign.wallet]))
        #expect(response.status == 202)
        #expect(response.json["recipients"] == .number(1))
        #expect(response.json["deliveries"] == .number(2))
        let missingEmails = response.json["missing"]?["emails"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let missingWallets = response.json["missing"]?["wallets"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(Set(missingEmails) == [foreign.email.lowercased(), "nobody@example.com"])
        #expect(missingWallets == [foreign.wallet.lowercased()])
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [foreign.id]) == 0)
    }

    @Test("a push that reaches no one is accepted, completed, and writes no deliveries")
    func nobodyResolved() throws {
        let partner = try intake.makePartner()
        let response = try intake.push(partner.key, pushBody(partner, emails: ["ghost@example.com"]))
        #expect(response.status == 202)
        #expect(response.json["status"] == .string("completed"))
        #expect(response.json["deliveries"] == .number(0))
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 0)
    }

    @Test("users who opted out are suppressed and listed with their opt-out state")
    func optOutSuppression() throws {
        let partner = try intake.makePartner()
        let opted = try intake.makeUser(tenant: partner.tenantID)
        let other = try intake.makeUser(tenant: partner.tenantID, android: false)
        #expect(try intake.host("PUT", "/api/internal/users/\(opted.id)/opt-outs/\(partner.miniAppID)").status == 204)
        let response = try intake.push(partner.key, pushBody(partner, emails: [opted.email, other.email]))
        #expect(response.status == 202)
        #expect(response.json["recipients"] == .number(2))
        #expect(response.json["suppressed"] == .number(1))
        #expect(response.json["deliveries"] == .number(1))
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [opted.id]) == 0)
        let senders = try intake.host("GET", "/api/internal/users/\(opted.id)/mini-app-senders")
        let entry = try #require(senders.json["senders"]?.arrayValue?.first)
        #expect(entry["miniAppId"] == .string(partner.miniAppID))
        #expect(entry["optedOut"] == .bool(true))
        #expect(entry["displayName"] == .string("Pull"))
    }

    @Test("invalidated tokens are not sent to")
    func invalidatedTokens() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        try DB.execute("UPDATE devices SET apns_token_invalidated_at = now() WHERE user_id = $1", [user.id])
        let response = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(response.json["deliveries"] == .number(1))
        let services = try DB.rows("SELECT service FROM deliveries WHERE user_id = $1", [user.id])
        #expect(try services.map { try $0.string(0) } == ["fcm"])
    }

    @Test("sendAt schedules the deliveries and ttlSeconds sets their expiry")
    func scheduling() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let sendAt = Date().addingTimeInterval(3600)
        let response = try intake.push(
            partner.key,
            pushBody(
                partner, emails: [user.email], extra: #","sendAt":"\#(ISO8601.format(sendAt))","ttlSeconds":600"#))
        #expect(response.status == 202)
        #expect(response.json["status"] == .string("scheduled"))
        let row = try #require(
            try DB.rows(
                "SELECT available_at, expires_at FROM deliveries WHERE user_id = $1", [user.id]
            ).first)
        #expect(abs(try row.date(0).timeIntervalSince(sendAt)) < 0.01)
        #expect(abs(try row.date(1).timeIntervalSince(sendAt.addingTimeInterval(600))) < 0.01)
        let requestID = try #require(response.json["requestId"]?.stringValue)
        let status = try intake.request("GET", "/api/partners/notifications/push/\(requestID)", token: partner.key)
        #expect(status.json["status"] == .string("scheduled"))
    }

    @Test("GET returns the request's counts to its partner; another partner gets the 404 of an unknown id")
    func statusLookup() throws {
        let partner = try intake.makePartner()
        let other = try intake.makePartner(tenant: partner.tenantID)
        let user = try intake.makeUser(tenant: partner.tenantID)
        let requestID = try #require(
            try intake.push(partner.key, pushBody(partner, emails: [user.email])).json["requestId"]?.stringValue)
        let path = "/api/partners/notifications/push/\(requestID)"
        let mine = try intake.request("GET", path, token: partner.key)
        #expect(mine.status == 200)
        #expect(mine.json["status"] == .string("queued"))
        #expect(mine.json["deliveries"] == .number(2))
        #expect(mine.json["pending"] == .number(2))
        let foreign = try intake.request("GET", path, token: other.key)
        let unknownID = UUIDv7.make(at: Date()).uuidString.lowercased()
        let unknown = try intake.request("GET", "/api/partners/notifications/push/\(unknownID)", token: other.key)
        #expect(foreign.status == 404)
        #expect(foreign.errorCode == "not_found")
        // Byte for byte the answer to an id that exists nowhere: nothing tells the partner the request exists.
        #expect(foreign.status == unknown.status && foreign.body == unknown.body)
        // Not a UUID: refused by the id rules before any lookup (HostileClientIntakeTests).
        #expect(
            try intake.request("GET", "/api/partners/notifications/push/not-a-uuid", token: partner.key).status == 400)
        #expect(
            try intake.request("GET", "/api/partners/notifications/push/\(UUID())", token: partner.key).status == 404)

        // Counts rolled up by the worker show through, and nothing pending means completed.
        try DB.execute("UPDATE push_requests SET sent = 1, failed = 1 WHERE id = $1::uuid", [requestID])
        let done = try intake.request("GET", path, token: partner.key)
        #expect(done.json["status"] == .string("completed"))
        #expect(done.json["pending"] == .number(0))
    }

    struct Rejection: Sendable, CustomStringConvertible {
        let name: String
        let status: Int
        let code: String
        let field: String?
        let body: @Sendable (TestPartner) -> String
        var description: String { name }
    }

    static let rejections: [Rejection] = [
        Rejection(name: "malformed JSON", status: 400, code: "invalid_json", field: nil) { _ in #"{"recipients":"# },
        Rejection(name: "unknown field", status: 400, code: "unknown_field", field: "subtitle") {
            pushBody($0, emails: ["a@example.com"], extra: #","subtitle":"x""#)
        },
        Rejection(name: "no recipients", status: 400, code: "invalid_field", field: "recipients") { pushBody($0) },
        Rejection(name: "bad wallet", status: 400, code: "invalid_field", field: "recipients.wallets[0]") {
            pushBody($0, wallets: ["0x123"])
        },
        Rejection(name: "missing title", status: 400, code: "missing_field", field: "title") { _ in
            #"{"recipients":{"emails":["a@example.com"]}}"#
        },
        Rejection(name: "title too long", status: 400, code: "invalid_field", field: "title") {
            pushBody($0, emails: ["a@example.com"], title: String(repeating: "t", count: 121))
        },
        Rejection(name: "deep link of another mini-app", status: 403, code: "deep_link_forbidden", field: "deepLink") {
            _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","deepLink":"basedapp://miniapp/someone.else/x"}"#
        },
        Rejection(name: "reserved data key", status: 400, code: "invalid_field", field: "data.deliveryId") {
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","deepLink":"\#($0.deepLinkRoot)","data":{"deliveryId":"x"}}"#
        },
        Rejection(name: "icon in data", status: 400, code: "invalid_field", field: "data.icon") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"icon":"https://evil.example/i.png"}}"#
        },
        Rejection(
            name: "time-sensitive without the partner's permission", status: 403,
            code: "time_sensitive_not_allowed", field: "interruptionLevel"
        ) { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","interruptionLevel":"time-sensitive"}"#
        },
        Rejection(name: "critical interruption level", status: 400, code: "invalid_field", field: "interruptionLevel") {
            _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","interruptionLevel":"critical"}"#
        },
        Rejection(name: "unknown interruption level", status: 400, code: "invalid_field", field: "interruptionLevel") {
            _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","interruptionLevel":"urgent"}"#
        },
        Rejection(
            name: "interruption level not a string", status: 400, code: "invalid_field",
            field: "interruptionLevel"
        ) { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","interruptionLevel":2}"#
        },
        // The shared intake lists no notification category (HERALD_NOTIFICATION_CATEGORIES unset).
        Rejection(name: "a category with none configured", status: 400, code: "unknown_category", field: "category") {
            _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","category":"INVITE"}"#
        },
        Rejection(name: "a category that is not a string", status: 400, code: "invalid_field", field: "category") {
            _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","category":7}"#
        },
        Rejection(name: "category in data", status: 400, code: "invalid_field", field: "data.category") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"category":"INVITE"}}"#
        },
        Rejection(name: "non-string data", status: 400, code: "invalid_field", field: "data.count") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"count":3}}"#
        },
        Rejection(name: "payload over 4096 bytes", status: 422, code: "payload_too_large", field: "data") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"blob":"\#(String(repeating: "x", count: 3900))"}}"#
        },
        Rejection(name: "too many recipients", status: 422, code: "too_many_recipients", field: "recipients") { _ in
            let emails = (0...1000).map { "\"u\($0)@example.com\"" }.joined(separator: ",")
            return #"{"recipients":{"emails":[\#(emails)]},"title":"t"}"#
        },
        Rejection(name: "sendAt beyond 7 days", status: 422, code: "send_at_out_of_range", field: "sendAt") { _ in
            let date = ISO8601.format(Date().addingTimeInterval(8 * 86400))
            return #"{"recipients":{"emails":["a@example.com"]},"title":"t","sendAt":"\#(date)"}"#
        },
        Rejection(name: "ttl out of range", status: 400, code: "invalid_field", field: "ttlSeconds") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","ttlSeconds":0}"#
        },
        // Text that hides or reorders, sent as JSON escapes: the field is named, nothing is written.
        Rejection(name: "zero-width space in the title", status: 400, code: "invalid_field", field: "title") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"Pay\u200bPal"}"#
        },
        Rejection(name: "right-to-left override in the body", status: 400, code: "invalid_field", field: "body") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","body":"total \u202e0001$"}"#
        },
        Rejection(name: "soft hyphen in a data value", status: 400, code: "invalid_field", field: "data.note") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"note":"a\u00adb"}}"#
        },
        Rejection(name: "zero-width joiner between letters", status: 400, code: "invalid_field", field: "title") { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"a\u200db"}"#
        },
        Rejection(
            name: "title opening with a bracket", status: 400, code: "title_bracket_prefix",
            field: "title"
        ) { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":" [Bank] Your card is blocked"}"#
        },
        Rejection(
            name: "reserved data key in capitals", status: 400, code: "invalid_field",
            field: "data.Channel"
        ) { _ in
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"Channel":"x"}}"#
        },
        Rejection(
            name: "deep link with a doubly encoded dot", status: 403, code: "deep_link_forbidden",
            field: "deepLink"
        ) {
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","deepLink":"\#($0.deepLinkRoot)/%252e%252e/x"}"#
        },
    ]

    @Test("bad input gets a clear error and writes nothing", arguments: rejections)
    func rejected(_ rejection: Rejection) throws {
        let partner = try intake.makePartner()
        _ = try intake.makeUser(tenant: partner.tenantID)
        let response = try intake.push(partner.key, rejection.body(partner), idempotencyKey: "k-\(UUID())")
        #expect(response.status == rejection.status, "\(response.text)")
        #expect(response.errorCode == rejection.code)
        #expect(response.errorField == rejection.field)
        #expect(response.json["error"]?["message"]?.stringValue?.isEmpty == false)
        #expect(try DB.writes(partnerID: partner.id) == 0)
    }

    @Test("the payload-size error names the overflow")
    func overflowNamed() throws {
        let partner = try intake.makePartner()
        let response = try intake.push(
            partner.key,
            #"{"recipients":{"emails":["a@example.com"]},"title":"t","data":{"blob":"\#(String(repeating: "x", count: 4000))"}}"#
        )
        let message = try #require(response.json["error"]?["message"]?.stringValue)
        #expect(message.contains("over the 4096-byte limit"))
    }

    @Test("content type, body size and authentication are enforced before anything else")
    func transportRules() throws {
        let partner = try intake.makePartner()
        let path = "/api/partners/notifications/push"
        let body = Array(pushBody(partner, emails: ["a@example.com"]).utf8)
        let wrongType = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: path,
            headers: [("Authorization", "Bearer \(partner.key)"), ("Content-Type", "text/plain")], body: body)
        #expect(wrongType.status == 415)
        #expect(wrongType.errorCode == "unsupported_media_type")
        let huge = Array(repeating: UInt8(ascii: " "), count: 70_000)
        let tooLarge = try TestHTTPClient.send(
            port: intake.port, method: "POST", path: path,
            headers: [("Authorization", "Bearer \(partner.key)"), ("Content-Type", "application/json")], body: huge)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.errorCode == "body_too_large")
        #expect(try intake.request("POST", path, token: nil, json: String(decoding: body, as: UTF8.self)).status == 401)
        let unknown = try intake.request(
            "POST", path, token: "mp_" + String(repeating: "0", count: 32),
            json: String(decoding: body, as: UTF8.self))
        #expect(unknown.status == 401)
        #expect(unknown.errorCode == "unauthorized")
        #expect(unknown.headers["www-authenticate"] == "Bearer")
        #expect(
            try intake.request(
                "POST", path, token: IntakeHarness.adminToken,
                json: String(decoding: body, as: UTF8.self)
            ).status == 401)
        #expect(try DB.writes(partnerID: partner.id) == 0)
        #expect(try intake.request("GET", path, token: partner.key).status == 405)
        #expect(try intake.request("GET", "/api/nothing-here", token: partner.key).status == 404)
    }
}
