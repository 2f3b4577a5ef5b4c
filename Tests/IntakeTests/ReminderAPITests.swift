import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Intake
import ServiceSupport
import Store
import Testing

/// The host's reminders against real Postgres: what a schedule writes, every refusal writing
/// nothing, the per-(user, mini-app) cap (exact across intake processes), the list and the cancel.
/// Delivery through a worker to the simulator is in Tests/WorkerTests/ReminderFlowTests.swift.
@Suite("Reminders API", .requiresDatabase)
struct ReminderAPITests {
    let intake = IntakeHarness.shared

    static func path(_ userID: String) -> String { "/api/internal/users/\(userID)/reminders" }

    /// A reminder body for `partner`'s mini-app, due an hour from now unless `at` says otherwise.
    static func body(
        _ partner: TestPartner, title: String = "Pack drop", body: String = "Your pack opens now",
        deepLink: String? = nil, at: Date = Date().addingTimeInterval(3600)
    ) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("miniAppId", .string(partner.miniAppID)), ("title", .string(title)), ("body", .string(body)),
        ]
        if let deepLink { members.append(("deepLink", .string(deepLink))) }
        members.append(("at", .string(ISO8601.format(at))))
        return JSONWriter.string(.object(members))
    }

    func schedule(_ user: TestUser, _ json: String) throws -> TestHTTPClient.Response {
        try intake.host("POST", Self.path(user.id), json)
    }

    /// Rows the user's reminders wrote anywhere: what a refused schedule must leave as it was.
    static func writes(userID: String) throws -> Int {
        try DB.count(
            """
            SELECT (SELECT count(*) FROM reminders WHERE user_id = $1)
                 + (SELECT count(*) FROM deliveries WHERE user_id = $1)
                 + (SELECT count(*) FROM user_senders WHERE user_id = $1)
            """, [userID])
    }

    @Test(
        "a schedule answers 201 with the reminder and writes its audit row, one signed delivery per device due at `at`")
    func schedules() throws {
        let partner = try intake.makePartner(displayName: "Pull")
        let user = try intake.makeUser(tenant: partner.tenantID)
        let at = Date().addingTimeInterval(3600)
        let link = partner.deepLinkRoot + "/packs/7"
        let response = try schedule(user, Self.body(partner, deepLink: link, at: at))
        #expect(response.status == 201, "\(response.text)")
        let json = response.json
        #expect(
            json.objectMembers?.map(\.key) == [
                "reminderId", "miniAppId", "title", "body", "deepLink", "at", "status",
                "createdAt",
            ])
        let reminderID = try #require(json["reminderId"]?.stringValue)
        #expect(reminderID == reminderID.lowercased() && UUID(uuidString: reminderID).flatMap(UUIDv7.timestamp) != nil)
        #expect(json["miniAppId"] == .string(partner.miniAppID))
        #expect(json["title"] == .string("Pack drop"), "as given, without the prefix")
        #expect(json["body"] == .string("Your pack opens now"))
        #expect(json["deepLink"] == .string(link))
        #expect(json["at"] == .string(ISO8601.format(at)))
        #expect(json["status"] == .string("scheduled"))
        let createdAt = try #require(json["createdAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(createdAt.timeIntervalSinceNow) < 60)

        // The audit row of a one-recipient push with the prefixed title, due at `at`.
        let audit = try #require(
            try DB.rows(
                """
                SELECT p.title, p.recipients, p.deliveries, p.suppressed, p.send_at, p.partner_id::text, p.deep_link
                  FROM reminders r JOIN push_requests p ON p.id = r.request_id AND p.created_at = r.request_created_at
                 WHERE r.id = $1::uuid
                """, [reminderID]
            ).first)
        #expect(try audit.string(0) == "[Pull] Pack drop")
        #expect(try audit.int(1) == 1 && audit.int(2) == 2 && audit.int(3) == 0)
        #expect(try abs(audit.date(4).timeIntervalSince(at)) < 0.001)
        #expect(try audit.string(5) == partner.id)
        #expect(audit.optionalString(6) == link)

        let deliveries = try DB.rows(
            """
            SELECT d.id::text, d.service, d.device_id, d.payload, d.available_at, d.lane, d.expires_at
              FROM reminders r JOIN deliveries d ON d.id = ANY (r.deliveries) WHERE r.id = $1::uuid ORDER BY d.device_id
            """, [reminderID])
        #expect(try deliveries.map { try $0.string(2) } == ["iphone", "pixel"])
        for row in deliveries {
            #expect(try abs(row.date(4).timeIntervalSince(at)) < 0.001, "due at `at`")
            #expect(try row.int(5) == 0)
            // The default TTL (28 days) counts from `at`.
            #expect(try abs(row.date(6).timeIntervalSince(at) - Double(PushRules().defaultTTLSeconds)) < 0.001)
            let payload = try JSONParser.parse(try row.string(3))
            let fields = try row.string(1) == "apns" ? payload : try #require(payload["data"])
            if try row.string(1) == "apns" {
                #expect(payload["aps"]?["alert"]?["title"] == .string("[Pull] Pack drop"))
            } else {
                #expect(fields["title"] == .string("[Pull] Pack drop"))
            }
            #expect(fields["deliveryId"] == .string(try row.string(0)))
            #expect(fields["deepLink"] == .string(link))
            #expect(fields["miniAppId"] == .string(partner.miniAppID))
            #expect(fields["imageUrl"] == nil, "the partner has no icon")
            #expect(fields["kid"] == .string(IntakeHarness.signingKeyID))
            #expect(fields["sig"] == .string(Self.signature(payload, service: try row.string(1))))
        }
        // The user can find the mini-app in Settings > Notifications > Mini-apps.
        let senders = try intake.host("GET", "/api/internal/users/\(user.id)/mini-app-senders")
        #expect(senders.json["senders"]?.arrayValue?.first?["miniAppId"] == .string(partner.miniAppID))
    }

    @Test("an `at` slightly past (clock skew) is kept as given and its deliveries are due at once")
    func dueAtOnce() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let at = Date().addingTimeInterval(-30)
        let response = try schedule(user, Self.body(partner, at: at))
        #expect(response.status == 201, "\(response.text)")
        #expect(response.json["at"] == .string(ISO8601.format(at)))
        let createdAt = try #require(response.json["createdAt"]?.stringValue.flatMap(ISO8601.parse))
        let due = try #require(try DB.rows("SELECT available_at FROM deliveries WHERE user_id = $1", [user.id]).first)
        #expect(try abs(due.date(0).timeIntervalSince(createdAt)) < 0.002, "due at its creation, not 30 s ago")
    }

    /// The HMAC of a stored payload's signed fields (SignedEnvelope), with the test intake's key.
    static func signature(_ payload: JSONValue, service: String) -> String {
        var fields: [(key: String, value: String)] = []
        if service == "apns" {
            fields.append(("title", payload["aps"]?["alert"]?["title"]?.stringValue ?? ""))
            fields.append(("body", payload["aps"]?["alert"]?["body"]?.stringValue ?? ""))
            fields.append(("isGroup", "true"))
            for member in payload.objectMembers ?? [] where !["aps", "isGroup", "sig", "kid"].contains(member.key) {
                fields.append((member.key, member.value.stringValue ?? ""))
            }
        } else {
            for member in payload["data"]?.objectMembers ?? [] where !["sig", "kid"].contains(member.key) {
                fields.append((member.key, member.value.stringValue ?? ""))
            }
        }
        return Base64URL.encode(
            Digest.hmacSHA256(key: IntakeHarness.signingKey, message: SignedEnvelope.canonicalBytes(fields)))
    }

    @Test("the payload's imageUrl is the partner's icon, as for a push")
    func icon() throws {
        let partner = try intake.makePartner()
        let upload = try intake.raw(
            "PUT", "/api/admin/mini-app-partners/\(partner.id)/icon", token: IntakeHarness.adminToken,
            type: "image/svg+xml", body: IconSamples.wideSVG)
        #expect(upload.status == 200)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let response = try schedule(user, Self.body(partner))
        #expect(response.status == 201, "\(response.text)")
        let payload = try JSONParser.parse(
            try #require(
                try DB.rows(
                    "SELECT payload FROM deliveries WHERE user_id = $1", [user.id]
                ).first
            ).string(0))
        #expect(payload["imageUrl"] == .string("\(IntakeHarness.publicURL)/icons/\(partner.miniAppID)/256.png"))
    }

    @Test("every malformed or refused reminder gets its status and code, and writes nothing")
    func refusals() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let revoked = try intake.makePartner(tenant: partner.tenantID)
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(revoked.id)").status == 200)
        let foreignPartner = try intake.makePartner()
        let optedOut = try intake.makeUser(tenant: partner.tenantID)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(optedOut.id)/opt-outs/\(partner.miniAppID)").status == 204)
        let deviceless = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        let invalidated = try intake.makeUser(tenant: partner.tenantID)
        try DB.execute(
            """
            UPDATE devices SET apns_token_invalidated_at = now(), fcm_token_invalidated_at = now() WHERE user_id = $1
            """, [invalidated.id])
        let ghost = TestEnvironment.unique("ghost")
        let now = Date()
        // A body whose rendered payload is over 4,096 bytes: 1,000 four-byte characters.
        let huge = String(repeating: "\u{1F514}", count: 1000)

        let cases: [(user: String, json: String, status: Int, code: String, field: String?)] = [
            (user.id, "{", 400, "invalid_json", nil),
            (user.id, "[]", 400, "invalid_field", ""),
            (
                user.id,
                #"{"miniAppId":"\#(partner.miniAppID)","title":"t","at":"\#(ISO8601.format(now + 60))","extra":1}"#,
                400, "unknown_field", "extra"
            ),
            (user.id, #"{"title":"t","at":"\#(ISO8601.format(now + 60))"}"#, 400, "missing_field", "miniAppId"),
            (
                user.id, #"{"miniAppId":"bad app","title":"t","at":"\#(ISO8601.format(now + 60))"}"#, 400,
                "invalid_field",
                "miniAppId"
            ),
            (
                user.id, #"{"miniAppId":"\#(partner.miniAppID)","at":"\#(ISO8601.format(now + 60))"}"#, 400,
                "missing_field",
                "title"
            ),
            (user.id, Self.body(partner, title: String(repeating: "t", count: 121)), 400, "invalid_field", "title"),
            (user.id, Self.body(partner, title: "tab\there"), 400, "invalid_field", "title"),
            (user.id, Self.body(partner, body: String(repeating: "b", count: 1001)), 400, "invalid_field", "body"),
            (
                user.id, Self.body(partner, deepLink: partner.deepLinkRoot + "/with space"), 400, "invalid_field",
                "deepLink"
            ),
            (user.id, #"{"miniAppId":"\#(partner.miniAppID)","title":"t"}"#, 400, "missing_field", "at"),
            (
                user.id, #"{"miniAppId":"\#(partner.miniAppID)","title":"t","at":"in an hour"}"#, 400, "invalid_field",
                "at"
            ),
            (
                user.id, Self.body(partner, deepLink: "basedapp://miniapp/other.app/x"), 403, "deep_link_forbidden",
                "deepLink"
            ),
            (user.id, Self.body(partner, at: now - 3600), 422, "at_out_of_range", "at"),
            (user.id, Self.body(partner, at: now + 8 * 86_400), 422, "at_out_of_range", "at"),
            (user.id, Self.body(partner, body: huge), 422, "payload_too_large", "body"),
            (
                user.id, #"{"miniAppId":"never.registered","title":"t","at":"\#(ISO8601.format(now + 60))"}"#, 422,
                "unknown_mini_app", "miniAppId"
            ),
            (user.id, Self.body(revoked), 422, "unknown_mini_app", "miniAppId"),
            (user.id, Self.body(foreignPartner), 403, "tenant_mismatch", "miniAppId"),
            (ghost, Self.body(partner), 404, "user_not_found", nil),
            (optedOut.id, Self.body(partner), 409, "opted_out", "miniAppId"),
            (deviceless.id, Self.body(partner), 409, "no_device", nil),
            (invalidated.id, Self.body(partner), 409, "no_device", nil),
            (String(repeating: "u", count: 129), Self.body(partner), 400, "invalid_field", "userId"),
        ]
        for item in cases {
            let response = try intake.host("POST", Self.path(item.user), item.json)
            #expect(response.status == item.status, "\(item.json) -> \(response.text)")
            #expect(response.errorCode == item.code, "\(item.json) -> \(response.text)")
            #expect(response.errorField == item.field, "\(item.json) -> \(response.text)")
        }
        let wrongType = try intake.request(
            "POST", Self.path(user.id), token: IntakeHarness.hostToken,
            json: Self.body(partner), headers: [("Content-Type", "text/plain")])
        #expect(wrongType.status == 415)
        #expect(try intake.request("POST", Self.path(user.id), token: nil, json: Self.body(partner)).status == 401)
        #expect(
            try intake.request("POST", Self.path(user.id), token: partner.key, json: Self.body(partner)).status == 401)

        for id in [user.id, optedOut.id, deviceless.id, invalidated.id, ghost] {
            #expect(try Self.writes(userID: id) == 0, "\(id)")
        }
        for id in [partner.id, revoked.id, foreignPartner.id] {
            #expect(try DB.writes(partnerID: id) == 0)
        }
    }

    @Test(
        "at most 20 pending reminders per user and mini-app: the 21st is 429 without Retry-After; a cancel makes room")
    func cap() throws {
        let partner = try intake.makePartner()
        let other = try intake.makePartner(tenant: partner.tenantID)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        var ids: [String] = []
        for index in 0..<20 {
            let response = try schedule(user, Self.body(partner, title: "Reminder \(index)"))
            #expect(response.status == 201, "\(index): \(response.text)")
            ids.append(response.json["reminderId"]?.stringValue ?? "")
        }
        let refused = try schedule(user, Self.body(partner))
        #expect(refused.status == 429)
        #expect(refused.errorCode == "too_many_reminders")
        #expect(refused.errorField == "miniAppId")
        #expect(refused.headers["retry-after"] == nil)
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1", [user.id]) == 20)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [user.id]) == 20)

        // Another mini-app of the same user, and another user of the same mini-app, have their own 20.
        #expect(try schedule(user, Self.body(other)).status == 201)
        let second = try intake.makeUser(tenant: partner.tenantID, android: false)
        #expect(try schedule(second, Self.body(partner)).status == 201)

        #expect(try intake.host("DELETE", Self.path(user.id) + "/\(ids[3])").status == 204)
        #expect(try schedule(user, Self.body(partner)).status == 201)
        #expect(try schedule(user, Self.body(partner)).status == 429)

        // A reminder a worker took (its delivery claimed) is no longer pending: it leaves room.
        try DB.execute(
            "UPDATE deliveries SET state = 'leased', attempts = 1 WHERE id = (SELECT deliveries[1] FROM reminders WHERE id = $1::uuid)",
            [ids[0]])
        #expect(try schedule(user, Self.body(partner)).status == 201)
        #expect(try schedule(user, Self.body(partner)).status == 429)
    }

    /// `count` schedules of `body` at once, alternating between two intake processes of their own; nil: no answer.
    static func race(_ count: Int, user: TestUser, body: String, headers: [(String, String)] = []) throws
        -> [TestHTTPClient.Response?]
    {
        let first = try IntakeProcess()
        let second = try IntakeProcess()
        defer { first.stop(); second.stop() }
        return runInParallel(count) { index in
            try? (index % 2 == 0 ? first : second).request(
                "POST", path(user.id), token: IntakeHarness.hostToken,
                json: body, headers: headers)
        }
    }

    @Test("the cap is exact when two intake processes race: 30 parallel schedules, 20 accepted")
    func capUnderConcurrency() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let responses = try Self.race(30, user: user, body: Self.body(partner))
        let statuses = responses.map { $0?.status ?? -1 }
        let tally = Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count)
        #expect(tally[201] == 20, "statuses: \(tally)")
        #expect(tally[429] == 10, "statuses: \(tally) (-1: no answer)")
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1", [user.id]) == 20)
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 20)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [user.id]) == 40)
    }

    @Test(
        "Idempotency-Key: a retried schedule answers the first reminder again (even with the user opted out since) and writes nothing; another body is 422"
    )
    func idempotentSchedule() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let key = "reminder-\(UUID())"
        let at = Date().addingTimeInterval(3600)
        let body = Self.body(partner, at: at)
        func keyed(_ json: String, _ key: String) throws -> TestHTTPClient.Response {
            try intake.request(
                "POST", Self.path(user.id), token: IntakeHarness.hostToken, json: json,
                headers: [("Idempotency-Key", key)])
        }
        let first = try keyed(body, key)
        #expect(first.status == 201, "\(first.text)")
        #expect(first.headers["idempotent-replayed"] == nil)
        let writes = try Self.writes(userID: user.id)

        let again = try keyed(body, key)
        #expect(again.status == 201)
        #expect(again.headers["idempotent-replayed"] == "true")
        #expect(again.text == first.text)
        #expect(try Self.writes(userID: user.id) == writes)

        // Another body with the key is refused; another key schedules a second reminder.
        let other = try keyed(Self.body(partner, title: "Another", at: at), key)
        #expect(other.status == 422)
        #expect(other.json["error"]?["code"] == .string("idempotency_key_reused"))
        #expect(other.json["error"]?["field"] == .string("Idempotency-Key"))
        #expect(try Self.writes(userID: user.id) == writes)
        #expect(try keyed(body, key + "-2").status == 201)
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1", [user.id]) == 2)

        // The user opted out since (a new schedule is 409 opted_out): the retry still gets the first answer.
        #expect(try intake.host("PUT", "/api/internal/users/\(user.id)/opt-outs/\(partner.miniAppID)").status == 204)
        #expect(try keyed(body, key + "-3").status == 409)
        let late = try keyed(body, key)
        #expect(late.status == 201, "\(late.text)")
        #expect(late.text == first.text)
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1", [user.id]) == 2)
        #expect(try keyed(body, "bad key\u{7}").status == 400)
    }

    @Test("Idempotency-Key: concurrent schedules with one key, on two intake processes, write one reminder")
    func idempotentUnderConcurrency() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let responses = try Self.race(
            12, user: user, body: Self.body(partner), headers: [("Idempotency-Key", "race-\(UUID())")])
        #expect(responses.allSatisfy { $0?.status == 201 }, "\(responses.map { $0?.status ?? -1 })")
        #expect(Set(responses.compactMap { $0?.json["reminderId"]?.stringValue }).count == 1)
        #expect(responses.filter { $0?.headers["idempotent-replayed"] == "true" }.count == 11)
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1", [user.id]) == 1)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE user_id = $1", [user.id]) == 2)
    }

    @Test("Idempotency-Key: a key last used over 24 hours ago schedules a new reminder")
    func idempotencyWindow() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let key = "old-\(UUID())"
        let body = Self.body(partner)
        let headers = [("Idempotency-Key", key)]
        let first = try intake.request(
            "POST", Self.path(user.id), token: IntakeHarness.hostToken, json: body, headers: headers)
        #expect(first.status == 201)
        try DB.execute(
            "UPDATE reminders SET created_at = created_at - interval '25 hours' WHERE user_id = $1", [user.id])
        let later = try intake.request(
            "POST", Self.path(user.id), token: IntakeHarness.hostToken, json: body, headers: headers)
        #expect(later.status == 201)
        #expect(later.headers["idempotent-replayed"] == nil)
        #expect(later.json["reminderId"] != first.json["reminderId"])
        #expect(
            try DB.count("SELECT count(*) FROM reminders WHERE user_id = $1 AND idempotency_key IS NOT NULL", [user.id])
                == 1)
    }

    @Test("the list holds the user's pending reminders only, soonest first; an unknown user is 404")
    func list() throws {
        let partner = try intake.makePartner()
        let other = try intake.makePartner(tenant: partner.tenantID)
        let user = try intake.makeUser(tenant: partner.tenantID)
        let stranger = try intake.makeUser(tenant: partner.tenantID)
        let empty = try intake.host("GET", Self.path(user.id))
        #expect(empty.status == 200)
        #expect(empty.json == .object([("userId", .string(user.id)), ("reminders", .array([]))]))

        let now = Date()
        let later = try schedule(user, Self.body(partner, title: "Later", at: now + 7200))
        let sooner = try schedule(user, Self.body(other, title: "Sooner", deepLink: other.deepLinkRoot, at: now + 600))
        let cancelled = try schedule(user, Self.body(partner, title: "Cancelled", at: now + 300))
        let taken = try schedule(user, Self.body(partner, title: "Taken", at: now + 60))
        #expect(try schedule(stranger, Self.body(partner, title: "Someone else's")).status == 201)
        let cancelledID = try #require(cancelled.json["reminderId"]?.stringValue)
        #expect(try intake.host("DELETE", Self.path(user.id) + "/\(cancelledID)").status == 204)
        // A worker took this one's delivery: it is past cancelling, so not listed.
        try DB.execute(
            """
            UPDATE deliveries SET state = 'leased', attempts = 1
             WHERE id = ANY ((SELECT deliveries FROM reminders WHERE id = $1::uuid)::uuid[])
            """, [try #require(taken.json["reminderId"]?.stringValue)])

        let listed = try intake.host("GET", Self.path(user.id))
        #expect(listed.status == 200)
        let reminders = try #require(listed.json["reminders"]?.arrayValue)
        #expect(reminders == [sooner.json, later.json], "\(listed.text)")
        #expect(reminders.first?["deepLink"] == .string(other.deepLinkRoot))
        #expect(reminders.last?["deepLink"] == .null)

        let ghost = try intake.host("GET", Self.path(TestEnvironment.unique("ghost")))
        #expect(ghost.status == 404)
        #expect(ghost.errorCode == "user_not_found")
    }

    @Test("cancel: 204 and nothing left to send, again 204; another user's or an unknown reminder 404; once taken 409")
    func cancel() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let stranger = try intake.makeUser(tenant: partner.tenantID)
        let scheduled = try schedule(user, Self.body(partner))
        let id = try #require(scheduled.json["reminderId"]?.stringValue)
        let deliveries = "((SELECT deliveries FROM reminders WHERE id = $1::uuid)::uuid[])"
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE id = ANY (\(deliveries))", [id]) == 2)

        #expect(try intake.host("DELETE", Self.path(stranger.id) + "/\(id)").errorCode == "reminder_not_found")
        #expect(try intake.host("DELETE", Self.path(user.id) + "/\(UUIDv7.make(at: Date()))").status == 404)
        #expect(try intake.host("DELETE", Self.path(user.id) + "/not-a-uuid").errorField == "reminderId")

        #expect(try intake.host("DELETE", Self.path(user.id) + "/\(id)").status == 204)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE id = ANY (\(deliveries))", [id]) == 0)
        #expect(try DB.count("SELECT count(*) FROM reminders WHERE id = $1::uuid AND status = 'cancelled'", [id]) == 1)
        // The audit row counts no delivery: its request reads as completed, with nothing sent.
        #expect(
            try DB.count(
                """
                SELECT p.deliveries + p.sent + p.failed FROM reminders r
                  JOIN push_requests p ON p.id = r.request_id AND p.created_at = r.request_created_at WHERE r.id = $1::uuid
                """, [id]) == 0)
        #expect(
            try intake.host("DELETE", Self.path(user.id) + "/\(id)").status == 204, "cancelling twice is idempotent")

        // Once a worker has taken one of its deliveries (leased, or finished and gone), it is 409 and stays so.
        for take in [
            "UPDATE deliveries SET state = 'leased', attempts = 1 WHERE id = \(deliveries)[1]",
            "UPDATE deliveries SET attempts = 1, available_at = now() + interval '1 minute' WHERE id = \(deliveries)[2]",
            "DELETE FROM deliveries WHERE id = \(deliveries)[1]",
        ] {
            let taken = try #require(try schedule(user, Self.body(partner)).json["reminderId"]?.stringValue)
            try DB.execute(take, [taken])
            let refused = try intake.host("DELETE", Self.path(user.id) + "/\(taken)")
            #expect(refused.status == 409, "\(take): \(refused.text)")
            #expect(refused.errorCode == "reminder_already_sent")
            #expect(try intake.host("DELETE", Self.path(user.id) + "/\(taken)").status == 409)
            #expect(
                try DB.count("SELECT count(*) FROM reminders WHERE id = $1::uuid AND status = 'sent'", [taken]) == 1)
        }
    }

    @Test("the janitor deletes reminders a week past their time, unless one is still pending")
    func retention() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let ids = try (0..<3).map { _ in
            try #require(try schedule(user, Self.body(partner)).json["reminderId"]?.stringValue)
        }
        #expect(try intake.host("DELETE", Self.path(user.id) + "/\(ids[0])").status == 204)
        // The second was sent (its delivery finished), the third is still queued (a worker outage).
        try DB.execute(
            "DELETE FROM deliveries WHERE id = (SELECT deliveries[1] FROM reminders WHERE id = $1::uuid)", [ids[1]])
        try DB.execute("UPDATE reminders SET at = now() - interval '8 days' WHERE user_id = $1", [user.id])
        try MaintenanceStore(pool: migratedDatabase).cleanExpired()
        let left = try DB.rows("SELECT id::text FROM reminders WHERE user_id = $1", [user.id]).map { try $0.string(0) }
        #expect(left == [ids[2]])
    }

    @Test("HERALD_REMINDER_MAX_PENDING is read (default 20) and validated")
    func setting() throws {
        let base = IntakeConfigurationTests.base
        #expect(try IntakeConfiguration.fromEnvironment(base).reminderMaxPending == 20)
        var custom = base
        custom["HERALD_REMINDER_MAX_PENDING"] = "3"
        #expect(try IntakeConfiguration.fromEnvironment(custom).reminderMaxPending == 3)
        for bad in ["0", "-1", "1001", "many"] {
            custom["HERALD_REMINDER_MAX_PENDING"] = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try IntakeConfiguration.fromEnvironment(custom) }
        }
    }
}
