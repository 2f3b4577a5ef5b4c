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
    static func push(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner,
        _ user: LiveActivityHarness.User, level: String = "passive", ttl: Int? = nil
    ) throws -> String {
        let ttlField = ttl.map { #","ttlSeconds":\#($0)"# } ?? ""
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Drop","body":"now","#
                    + #""interruptionLevel":"\#(level)"\#(ttlField)}"#), [202])
        return try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
    }

    static func status(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner,
        _ requestID: String
    ) throws -> JSONValue {
        try JSONParser.parse(
            try harness.request(
                "GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey
            ).body)
    }

    /// Sets `user`'s quiet hours to the hour before `now` to `hours` hours after it, in UTC; returns when they end.
    @discardableResult
    static func quietNow(
        _ harness: LiveActivityHarness, _ user: LiveActivityHarness.User, hours: Int = 1,
        now: Date = Date()
    ) throws -> Date {
        let minute = Int(now.timeIntervalSince1970 / 60) % 1440
        let start = (minute + 1380) % 1440, end = (minute + 60 * hours) % 1440
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(user.id)",
                """
                {"tenantId":"t1","emails":["\(user.email)"],"timeZone":"UTC",
                 "quietHours":{"start":"\(QuietHours.text(start))","end":"\(QuietHours.text(end))"}}
                """), [200])
        // The next `end` on the UTC clock: this minute's start plus the hours.
        return Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 60).rounded(.down) * 60 + 3600 * Double(hours))
    }

    /// The console's detail of a request (`GET /api/admin/console/requests/{id}`), read with the admin token.
    static func console(_ harness: LiveActivityHarness, _ requestID: String) throws -> JSONValue {
        try JSONParser.parse(
            try harness.expect(
                harness.request(
                    "GET", "/api/admin/console/requests/\(requestID)", token: LiveActivityHarness.adminToken), [200]
            ).body)
    }

    /// The console's finished deliveries of a request as "outcome (reason)".
    static func consoleOutcomes(_ harness: LiveActivityHarness, _ requestID: String) throws -> [String] {
        try (console(harness, requestID)["deliveryRows"]?.arrayValue ?? []).map { row in
            let outcome = row["outcome"]?.stringValue ?? "?"
            return row["reason"]?.stringValue.map { "\(outcome) (\($0))" } ?? outcome
        }
    }

    /// The outbox rows of `requestID`: state, attempts, last error and when due.
    static func rows(_ harness: LiveActivityHarness, _ requestID: String)
        throws -> [(state: String, attempts: Int, error: String?, availableAt: Date)]
    {
        try harness.db.connection.query(
            "SELECT state, attempts, last_error, available_at FROM deliveries WHERE request_id = $1::uuid",
            [requestID]
        ).rows.map { (try $0.string(0), try $0.int(1), $0.optionalString(2), try $0.date(3)) }
    }

    /// Makes a held row due now (and, with `expired`, past its TTL) and wakes the workers.
    static func release(_ harness: LiveActivityHarness, _ requestID: String, expired: Bool = false) throws {
        try harness.db.connection.query(
            """
            UPDATE deliveries SET available_at = now(),
                   expires_at = CASE WHEN $2 THEN now() - interval '1 second' ELSE expires_at END
             WHERE request_id = $1::uuid
            """, [requestID, expired])
        try harness.db.connection.execute("NOTIFY herald_deliveries")
    }

    @Test("a user over the cap gets nothing more from any partner: cap 3, two partners, 5 pushes, 3 reach the phone")
    func capHoldsAcrossPartners() async throws {
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
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
        // The status counts a capped push in `suppressed`, not in `failed`; the console says why.
        let statuses = try requests.map { try Self.status(harness, $0.0, $0.1) }
        #expect(statuses.filter { $0["suppressed"] == .number(1) }.count == 2, "\(statuses)")
        #expect(statuses.allSatisfy { $0["failed"] == .number(0) && $0["pending"] == .number(0) }, "\(statuses)")
        let cappedRequest = try #require(zip(requests, statuses).first { $0.1["suppressed"] == .number(1) }?.0.1)
        #expect(try Self.consoleOutcomes(harness, cappedRequest) == ["suppressed (user_cap)"])
        let detail = try Self.console(harness, cappedRequest)
        #expect(detail["suppressed"] == .number(1) && detail["failed"] == .number(0) && detail["pending"] == .number(0))
        let capped = try harness.db.count(
            """
            SELECT count(*)::int FROM delivery_history WHERE user_id = $1 AND outcome = 'suppressed'
               AND last_error = 'user_cap'
            """, [user.id])
        #expect(capped == 2)
        #expect(worker.metrics.render().contains(#"herald_worker_deliveries_guarded_total{reason="user_cap"} 2"#))
        let counted = try harness.db.count(
            "SELECT cardinality(requests) FROM user_push_windows WHERE user_id = $1",
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
        #expect(
            try harness.db.count(
                "SELECT count(*)::int FROM delivery_history WHERE user_id = $1 AND last_error = 'user_cap'",
                [user.id]) == 8)
    }

    @Test("a passive push inside quiet hours is held until they end, attempts unspent, and sent once they are over")
    func quietHoursHoldAPassivePush() async throws {
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
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
        #expect(
            abs(held.availableAt.timeIntervalSince(end)) < 1,
            "held until \(held.availableAt), quiet hours end \(end)")
        #expect(harness.fcmMessages(to: fcmToken).isEmpty)
        let status = try Self.status(harness, partner, requestID)
        #expect(status["status"] == .string("queued"))
        #expect(status["held"] == .number(1) && status["pending"] == .number(1), "\(status)")
        #expect(try Self.console(harness, requestID)["held"] == .number(1))
        #expect(worker.metrics.render().contains(#"herald_worker_deliveries_guarded_total{reason="quiet_hours"} 1"#))

        // The host lifts the quiet hours (a PUT is the whole user): the PUT itself makes the held row due.
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(user.id)",
                #"{"tenantId":"t1","emails":["\#(user.email)"]}"#), [200])
        try await harness.workers.waitUntil("the push sent") { harness.fcmMessages(to: fcmToken).count == 1 }
        try await harness.workers.waitUntil("request completed") {
            try Self.status(harness, partner, requestID)["status"] == .string("completed")
        }
        let done = try Self.status(harness, partner, requestID)
        #expect(done["sent"] == .number(1) && done["held"] == .number(0) && done["pending"] == .number(0), "\(done)")
    }

    @Test("a PUT that changes the quiet hours holds the held rows to the new end; one that keeps them moves nothing")
    func changedQuietHoursRejudgeHeldRows() async throws {
        let harness = try LiveActivityHarness()
        let worker = try harness.workers.startWorker()
        let user = try harness.user(iphone: false)
        let fcmToken = try #require(user.fcmToken)
        let partner = try harness.partner()
        let now = Date()
        let end = try Self.quietNow(harness, user, now: now)
        let requestID = try Self.push(harness, partner, user)
        try await harness.workers.waitUntil("the row held for the quiet hours") {
            try Self.rows(harness, requestID).first?.error == "quiet_hours"
        }

        // The same guards again: the held row keeps its time, and is not claimed again.
        try Self.quietNow(harness, user, now: now)
        let kept = try #require(try Self.rows(harness, requestID).first)
        #expect(abs(kept.availableAt.timeIntervalSince(end)) < 1, "\(kept.availableAt) \(end)")

        // Longer quiet hours: released, claimed again, and held to the new end.
        let later = try Self.quietNow(harness, user, hours: 2)
        try await harness.workers.waitUntil("the row held to the new end") {
            try Self.rows(harness, requestID).first.map { abs($0.availableAt.timeIntervalSince(later)) < 1 } ?? false
        }
        let held = try #require(try Self.rows(harness, requestID).first)
        #expect(held.state == "pending" && held.attempts == 0 && held.error == "quiet_hours")
        #expect(harness.fcmMessages(to: fcmToken).isEmpty)
        #expect(try Self.status(harness, partner, requestID)["held"] == .number(1))
        // Held twice: at first, and after the change (not after the PUT that kept the guards).
        #expect(worker.metrics.render().contains(#"herald_worker_deliveries_guarded_total{reason="quiet_hours"} 2"#))
    }

    @Test("an opt-out after the push was accepted counts in the request's suppressed, not its failed")
    func optOutAfterAcceptanceIsSuppressed() async throws {
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
        let user = try harness.user(iphone: false)
        let partner = try harness.partner()
        let requestID = try Self.push(harness, partner, user)
        try harness.expect(harness.host("PUT", "/api/internal/users/\(user.id)/opt-outs/\(partner.miniApp)"), [204])
        try harness.workers.startWorker()
        try await harness.workers.waitUntil("request completed") {
            try Self.status(harness, partner, requestID)["status"] == .string("completed")
        }
        let status = try Self.status(harness, partner, requestID)
        #expect(
            status["suppressed"] == .number(1) && status["failed"] == .number(0) && status["sent"] == .number(0),
            "\(status)")
        #expect(try Self.consoleOutcomes(harness, requestID) == ["suppressed (opted_out)"])
    }

    @Test("a group's member held for quiet hours keeps the push's interruption level when it is split off")
    func splitMemberKeepsItsLevel() async throws {
        let harness = try LiveActivityHarness()
        // 16 deliveries to one (service, environment) make a group row (Queries.PushRequests.enqueue).
        let users = try (0..<16).map { _ in try harness.user(iphone: false) }
        let partner = try harness.partner()
        try Self.quietNow(harness, users[0])
        let emails = users.map { #""\#($0.email)""# }.joined(separator: ",")
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json:
                    #"{"recipients":{"emails":[\#(emails)]},"title":"Drop","body":"now","interruptionLevel":"passive"}"#
            ),
            [202])
        let requestID = try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
        #expect(
            try harness.db.count(
                "SELECT count(*)::int FROM deliveries WHERE request_id = $1::uuid AND members IS NOT NULL",
                [requestID]) == 1)
        try harness.workers.startWorker()

        try await harness.workers.waitUntil("the other 15 sent") {
            try Self.status(harness, partner, requestID)["sent"] == .number(15)
        }
        let split = try harness.db.connection.query(
            """
            SELECT user_id, interruption_level::text, last_error FROM deliveries WHERE request_id = $1::uuid
            """, [requestID]
        ).rows.map { (try $0.string(0), $0.optionalString(1), $0.optionalString(2)) }
        #expect(split.count == 1 && split.first?.0 == users[0].id, "\(split)")
        #expect(split.first?.1 == "passive" && split.first?.2 == "quiet_hours", "\(split)")
        let status = try Self.status(harness, partner, requestID)
        #expect(status["status"] == .string("sending") && status["held"] == .number(1), "\(status)")
    }

    @Test("a users-file line without guards keeps the user's; one with them replaces them; an unknown zone is refused")
    func backfillKeepsGuards() async throws {
        let harness = try LiveActivityHarness()
        try harness.workers.startWorker()
        let user = try harness.user(iphone: false)
        let partner = try harness.partner()
        let end = try Self.quietNow(harness, user)
        let requestID = try Self.push(harness, partner, user)
        try await harness.workers.waitUntil("the row held for the quiet hours") {
            try Self.rows(harness, requestID).first?.error == "quiet_hours"
        }
        let other = "backfilled-\(UUID().uuidString.prefix(8).lowercased())"
        let lines = [
            #"{"userId":"\#(user.id)","tenantId":"t1","emails":["\#(user.email)"]}"#,
            #"{"userId":"\#(other)","tenantId":"t1","emails":[],"timeZone":"Asia/Tokyo","#
                + #""quietHours":{"start":"22:30","end":"07:00"}}"#,
            #"{"userId":"\#(other)-x","tenantId":"t1","emails":[],"timeZone":"Mars/Olympus_Mons"}"#,
        ]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("users-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = harness.db.url
        let result = try ChildProcess.run(
            TestEnvironment.binDirectory.appendingPathComponent("heraldctl"),
            ["backfill", "users", file.path, "--json"], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        // The output holds the progress lines (stderr) too; the summary is the JSON line.
        let summaryLine = try #require(result.output.split(separator: "\n").last { $0.hasPrefix("{") })
        let summary = try JSONParser.parse(String(summaryLine))
        #expect(summary["users"] == .number(2), "\(result.output)")
        let rejected = summary["rejected"]?.arrayValue ?? []
        #expect(rejected.map { $0["code"]?.stringValue } == ["unknown_time_zone"], "\(result.output)")

        // The first user's guards and held row are as they were; the second user's guards are the line's.
        #expect(
            try harness.db.count(
                """
                SELECT count(*)::int FROM users WHERE id = $1 AND time_zone = 'UTC' AND quiet_start IS NOT NULL
                """, [user.id]) == 1)
        let held = try #require(try Self.rows(harness, requestID).first)
        #expect(held.error == "quiet_hours" && abs(held.availableAt.timeIntervalSince(end)) < 1)
        #expect(
            try harness.db.count(
                """
                SELECT count(*)::int FROM users WHERE id = $1 AND time_zone = 'Asia/Tokyo' AND quiet_start = '22:30'
                   AND quiet_end = '07:00'
                """, [other]) == 1)
        #expect(try harness.db.count("SELECT count(*)::int FROM users WHERE id = $1", ["\(other)-x"]) == 0)
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
        let reminder = JSONWriter.string(
            .object([
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
        #expect(
            try harness.db.count(
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
            let response = try harness.host(
                "PUT", "/api/internal/users/\(userID)",
                #"{"tenantId":"t1","emails":["\#(userID)@example.com"],\#(test.body)}"#)
            #expect(response.status == (test.code == "unknown_time_zone" ? 422 : 400), "\(test.body): \(response.text)")
            let error = try JSONParser.parse(response.body)["error"]
            #expect(error?["code"] == .string(test.code), "\(test.body): \(response.text)")
            #expect(error?["field"] == .string(test.field), "\(test.body): \(response.text)")
            #expect(try harness.db.count("SELECT count(*)::int FROM users WHERE id = $1", [userID]) == 0)
        }

        // Accepted ones are stored and answered back; a PUT without them clears them.
        let userID = "guarded-\(UUID().uuidString.prefix(8).lowercased())"
        let body =
            #"{"tenantId":"t1","emails":[],"timeZone":"Asia/Tokyo","#
            + #""quietHours":{"start":"22:30","end":"07:00"}}"#
        let created = try JSONParser.parse(
            try harness.expect(
                harness.host("PUT", "/api/internal/users/\(userID)", body), [201]
            ).body)
        #expect(created["timeZone"] == .string("Asia/Tokyo"))
        #expect(created["quietHours"]?["start"] == .string("22:30"))
        #expect(created["quietHours"]?["end"] == .string("07:00"))
        #expect(
            try harness.db.count(
                """
                SELECT count(*)::int FROM users WHERE id = $1 AND time_zone = 'Asia/Tokyo' AND quiet_start = '22:30'
                   AND quiet_end = '07:00'
                """, [userID]) == 1)
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(userID)", #"{"tenantId":"t1","emails":[]}"#),
            [200])
        #expect(
            try harness.db.count(
                "SELECT count(*)::int FROM users WHERE id = $1 AND time_zone IS NULL AND quiet_start IS NULL",
                [userID]) == 1)
    }

    @Test("quiet hours end at the next local end time, across midnight and a daylight-saving change")
    func quietHoursEnd() throws {
        let db = try QueueDatabase()
        func end(_ zone: String?, _ start: String, _ stop: String, _ now: String) throws -> String? {
            try db.connection.query(
                """
                SELECT to_char(herald_quiet_hours_end($1, $2::time, $3::time, $4::timestamptz) AT TIME ZONE 'UTC',
                               'YYYY-MM-DD"T"HH24:MI')
                """, [zone, start, stop, now]
            ).first?.optionalString(0)
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
