import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing
import Worker

/// The host's guards for a user across partners (Sources/Store/Migrations/functions/user_guards.sql): the cap on the
/// partner pushes a user gets an hour, and quiet hours, through the intake, the outbox, real workers and the
/// simulator. Quiet hours are set around the test's own time, and a held row is moved, never waited for.
@Suite(.requiresDatabase, .serialized)
struct UserGuardsFlowTests {
    /// A passive push from `partner` to `user`'s email; its request id.
    static func push(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner,
                     _ user: LiveActivityHarness.User, level: String = "passive", ttl: Int? = nil) throws -> String {
        let ttlField = ttl.map { #","ttlSeconds":\#($0)"# } ?? ""
        let response = try harness.expect(harness.request(
            "POST", "/api/partners/notifications/push", token: partner.apiKey,
            json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Drop","body":"now","#
                + #""interruptionLevel":"\#(level)"\#(ttlField)}"#), [202])
        return try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
    }

    static func status(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner,
                       _ requestID: String) throws -> JSONValue {
        try JSONParser.parse(try harness.request(
            "GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey).body)
    }

    /// Sets `user`'s quiet hours to the hour before now to the hour after it, in UTC; returns when they end.
    static func quietNow(_ harness: LiveActivityHarness, _ user: LiveActivityHarness.User) throws -> Date {
        let now = Date()
        let minute = Int(now.timeIntervalSince1970 / 60) % 1440
        let start = (minute + 1380) % 1440, end = (minute + 60) % 1440
        try harness.expect(harness.host("PUT", "/api/internal/users/\(user.id)", """
            {"tenantId":"t1","emails":["\(user.email)"],"timeZone":"UTC",
             "quietHours":{"start":"\(QuietHours.text(start))","end":"\(QuietHours.text(end))"}}
            """), [200])
        // The next `end` on the UTC clock: this minute's start plus 60 minutes.
        return Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 60).rounded(.down) * 60 + 3600)
    }

    /// The outbox rows of `requestID`: state, attempts, last error and when due.
    static func rows(_ harness: LiveActivityHarness, _ requestID: String)
        throws -> [(state: String, attempts: Int, error: String?, availableAt: Date)] {
        try harness.db.connection.query(
            "SELECT state, attempts, last_error, available_at FROM deliveries WHERE request_id = $1::uuid",
            [requestID]).rows.map { (try $0.string(0), try $0.int(1), $0.optionalString(2), try $0.date(3)) }
    }

    /// Makes a held row due now (and, with `expired`, past its TTL) and wakes the workers.
    static func release(_ harness: LiveActivityHarness, _ requestID: String, expired: Bool = false) throws {
        try harness.db.connection.query("""
            UPDATE deliveries SET available_at = now(),
                   expires_at = CASE WHEN $2 THEN now() - interval '1 second' ELSE expires_at END
             WHERE request_id = $1::uuid
            """, [requestID, expired])
        try harness.db.connection.execute("NOTIFY herald_deliveries")
    }

    @Test("a user over the cap gets nothing more from any partner: cap 3, two partners, 5 pushes, 3 reach the phone")
    func capHoldsAcrossPartners() async throws {
        let harness = try LiveActivityHarness()
        let worker = try harness.workers.startWorker { $0.claimer.userMaxPushesPerHour = 3 }
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partners = [try harness.partner(), try harness.partner(displayName: "Other")]
        var requests: [(LiveActivityHarness.Partner, String)] = []
        for index in 0..<5 {
            let partner = partners[index % 2]
            requests.append((partner, try Self.push(harness, partner, user, level: index == 4 ? "active" : "passive")))
        }
        try await harness.workers.waitUntil("every request completed") {
            try requests.allSatisfy { try Self.status(harness, $0.0, $0.1)["status"] == .string("completed") }
        }
        #expect(harness.fcmMessages(to: fcmToken).count == 3)
        let capped = try harness.db.count("""
            SELECT count(*)::int FROM delivery_history WHERE user_id = $1 AND outcome = 'suppressed'
               AND last_error = 'user_cap'
            """, [user.id])
        #expect(capped == 2)
        #expect(worker.metrics.render().contains(#"herald_worker_deliveries_guarded_total{reason="user_cap"} 2"#))
        let counted = try harness.db.count("SELECT cardinality(requests) FROM user_push_windows WHERE user_id = $1",
                                           [user.id])
        #expect(counted == 3)
    }

    @Test("two workers claiming one user's pushes at once never pass the cap together")
    func capIsExactAcrossWorkers() async throws {
        let harness = try LiveActivityHarness()
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partners = [try harness.partner(), try harness.partner(displayName: "Other")]
        // Queued before any worker runs, so both workers find them due together, one row a claim each.
        var requests: [(LiveActivityHarness.Partner, String)] = []
        for index in 0..<12 {
            let partner = partners[index % 2]
            requests.append((partner, try Self.push(harness, partner, user)))
        }
        for _ in 0..<2 {
            try harness.workers.startWorker {
                $0.claimer.userMaxPushesPerHour = 4
                $0.claimer.batchSize = 1
            }
        }
        try await harness.workers.waitUntil("every request completed") {
            try requests.allSatisfy { try Self.status(harness, $0.0, $0.1)["status"] == .string("completed") }
        }
        #expect(harness.fcmMessages(to: fcmToken).count == 4)
        #expect(try harness.db.count(
            "SELECT count(*)::int FROM delivery_history WHERE user_id = $1 AND last_error = 'user_cap'",
            [user.id]) == 8)
    }

    @Test("a passive push inside quiet hours is held until they end, attempts unspent, and sent once they are over")
    func quietHoursHoldAPassivePush() async throws {
        let harness = try LiveActivityHarness()
        let worker = try harness.workers.startWorker()
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partner = try harness.partner()
        let end = try Self.quietNow(harness, user)
        let requestID = try Self.push(harness, partner, user)

        try await harness.workers.waitUntil("the row held for the quiet hours") {
            try Self.rows(harness, requestID).first?.error == "quiet_hours"
        }
        let held = try #require(try Self.rows(harness, requestID).first)
        #expect(held.state == "pending" && held.attempts == 0)
        #expect(abs(held.availableAt.timeIntervalSince(end)) < 1,
                "held until \(held.availableAt), quiet hours end \(end)")
        #expect(harness.fcmMessages(to: fcmToken).isEmpty)
        #expect(try Self.status(harness, partner, requestID)["status"] == .string("queued"))
        #expect(worker.metrics.render().contains(#"herald_worker_deliveries_guarded_total{reason="quiet_hours"} 1"#))

        // The host lifts the quiet hours (a PUT is the whole user); the row, made due, goes.
        try harness.expect(harness.host("PUT", "/api/internal/users/\(user.id)",
                                        #"{"tenantId":"t1","emails":["\#(user.email)"]}"#), [200])
        try Self.release(harness, requestID)
        try await harness.workers.waitUntil("the push sent") { harness.fcmMessages(to: fcmToken).count == 1 }
        try await harness.workers.waitUntil("request completed") {
            try Self.status(harness, partner, requestID)["sent"] == .number(1)
        }
    }

    @Test("a time-sensitive push from an allowed partner and the user's own reminder pass quiet hours")
    func timeSensitiveAndRemindersPass() async throws {
        let harness = try LiveActivityHarness()
        try harness.workers.startWorker()
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partner = try harness.partner(extra: #","allowTimeSensitive":true"#)
        _ = try Self.quietNow(harness, user)

        _ = try Self.push(harness, partner, user, level: "time-sensitive")
        try await harness.workers.waitUntil("the time-sensitive push sent") {
            harness.fcmMessages(to: fcmToken).count == 1
        }
        let reminder = JSONWriter.string(.object([
            ("miniAppId", .string(partner.miniApp)), ("title", .string("Pack drop")), ("body", .string("now")),
            ("at", .string(ISO8601.format(Date()))),
        ]))
        try harness.expect(harness.host("POST", "/api/internal/users/\(user.id)/reminders", reminder), [201])
        try await harness.workers.waitUntil("the reminder sent") { harness.fcmMessages(to: fcmToken).count == 2 }
    }

    @Test("a push whose TTL ends while it is held for quiet hours is expired, never sent")
    func expiredWhileHeld() async throws {
        let harness = try LiveActivityHarness()
        try harness.workers.startWorker()
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partner = try harness.partner()
        _ = try Self.quietNow(harness, user)
        let requestID = try Self.push(harness, partner, user, ttl: 600)
        try await harness.workers.waitUntil("the row held") {
            try Self.rows(harness, requestID).first?.error == "quiet_hours"
        }

        try Self.release(harness, requestID, expired: true)
        try await harness.workers.waitUntil("request completed") {
            try Self.status(harness, partner, requestID)["status"] == .string("completed")
        }
        #expect(try harness.db.count(
            "SELECT count(*)::int FROM delivery_history WHERE request_id = $1::uuid AND outcome = 'expired'",
            [requestID]) == 1)
        #expect(harness.fcmMessages(to: fcmToken).isEmpty)
    }

    @Test("a malformed time zone or quiet hours are 400, an unknown zone 422, naming the field; nothing is written")
    func invalidGuardsAreRefused() throws {
        let harness = try LiveActivityHarness()
        let cases: [(body: String, code: String, field: String)] = [
            (#""timeZone":"Mars/Olympus_Mons""#, "unknown_time_zone", "timeZone"),
            (#""timeZone":"0""#, "unknown_time_zone", "timeZone"),
            (#""timeZone":"Europe/Paris; DROP""#, "invalid_time_zone", "timeZone"),
            (#""timeZone":"EST5EDT,M3.2.0""#, "invalid_time_zone", "timeZone"),
            (#""quietHours":{"start":"22:00","end":"22:00"}"#, "invalid_field", "quietHours"),
            (#""quietHours":{"start":"22:00"}"#, "missing_field", "quietHours.end"),
            (#""quietHours":{"start":"24:00","end":"08:00"}"#, "invalid_field", "quietHours.start"),
            (#""quietHours":{"start":"22:00","end":"8:00"}"#, "invalid_field", "quietHours.end"),
            (#""quietHours":{"start":"22:00","end":"08:00","tz":"UTC"}"#, "unknown_field", "quietHours.tz"),
            (#""quietHours":"22:00-08:00""#, "invalid_field", "quietHours"),
        ]
        for test in cases {
            let userID = "guarded-\(UUID().uuidString.prefix(8).lowercased())"
            let response = try harness.host("PUT", "/api/internal/users/\(userID)",
                                            #"{"tenantId":"t1","emails":["\#(userID)@example.com"],\#(test.body)}"#)
            #expect(response.status == (test.code == "unknown_time_zone" ? 422 : 400), "\(test.body): \(response.text)")
            let error = try JSONParser.parse(response.body)["error"]
            #expect(error?["code"] == .string(test.code), "\(test.body): \(response.text)")
            #expect(error?["field"] == .string(test.field), "\(test.body): \(response.text)")
            #expect(try harness.db.count("SELECT count(*)::int FROM users WHERE id = $1", [userID]) == 0)
        }

        // Accepted ones are stored and answered back; a PUT without them clears them.
        let userID = "guarded-\(UUID().uuidString.prefix(8).lowercased())"
        let body = #"{"tenantId":"t1","emails":[],"timeZone":"Asia/Tokyo","#
            + #""quietHours":{"start":"22:30","end":"07:00"}}"#
        let created = try JSONParser.parse(try harness.expect(
            harness.host("PUT", "/api/internal/users/\(userID)", body), [201]).body)
        #expect(created["timeZone"] == .string("Asia/Tokyo"))
        #expect(created["quietHours"]?["start"] == .string("22:30"))
        #expect(created["quietHours"]?["end"] == .string("07:00"))
        #expect(try harness.db.count("""
            SELECT count(*)::int FROM users WHERE id = $1 AND time_zone = 'Asia/Tokyo' AND quiet_start = '22:30'
               AND quiet_end = '07:00'
            """, [userID]) == 1)
        try harness.expect(harness.host("PUT", "/api/internal/users/\(userID)", #"{"tenantId":"t1","emails":[]}"#),
                           [200])
        #expect(try harness.db.count(
            "SELECT count(*)::int FROM users WHERE id = $1 AND time_zone IS NULL AND quiet_start IS NULL",
            [userID]) == 1)
    }

    @Test("quiet hours end at the next local end time, across midnight and a daylight-saving change")
    func quietHoursEnd() throws {
        let db = try QueueDatabase()
        func end(_ zone: String?, _ start: String, _ stop: String, _ now: String) throws -> String? {
            try db.connection.query("""
                SELECT to_char(herald_quiet_hours_end($1, $2::time, $3::time, $4::timestamptz) AT TIME ZONE 'UTC',
                               'YYYY-MM-DD"T"HH24:MI')
                """, [zone, start, stop, now]).first?.optionalString(0)
        }
        #expect(try end("UTC", "22:00", "08:00", "2026-03-01T23:30:00Z") == "2026-03-02T08:00")
        #expect(try end(nil, "22:00", "08:00", "2026-03-01T07:59:00Z") == "2026-03-01T08:00")
        #expect(try end("UTC", "22:00", "08:00", "2026-03-01T08:00:00Z") == nil)
        #expect(try end("UTC", "13:00", "14:00", "2026-03-01T12:59:00Z") == nil)
        #expect(try end("Europe/Paris", "22:00", "08:00", "2026-03-01T21:30:00Z") == "2026-03-02T07:00")
        // New York springs forward at 02:00 on 8 March 2026: 03:00 EDT is 07:00 UTC.
        #expect(try end("America/New_York", "01:00", "03:00", "2026-03-08T06:30:00Z") == "2026-03-08T07:00")
    }
}
