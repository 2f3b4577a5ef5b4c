import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Store
import Testing

@testable import Simulator

/// The incident path end to end: a revoked partner sends nothing more (queued, scheduled, retrying pushes,
/// reminders, Live Activity updates), its active activities end at once on every device, and replays skip its
/// rows; a suspended partner's queue waits, attempts unspent, and goes out after resume.
@Suite("partner revocation and suspension", .serialized, .requiresDatabase)
struct PartnerRevocationTests {
    static func push(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner,
        _ user: LiveActivityHarness.User, sendAt: Date? = nil
    ) throws -> TestHTTPClient.Response {
        let at = sendAt.map { #","sendAt":"\#(ISO8601.format($0))""# } ?? ""
        return try harness.request(
            "POST", "/api/partners/notifications/push", token: partner.apiKey,
            json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Deposit","body":"1/6"\#(at)}"#)
    }

    static func admin(_ harness: LiveActivityHarness, _ method: String, _ path: String) throws
        -> TestHTTPClient.Response
    {
        try harness.request(method, "/api/admin/mini-app-partners/" + path, token: LiveActivityHarness.adminToken)
    }

    static func apnsToken(_ harness: LiveActivityHarness, _ user: LiveActivityHarness.User) throws -> String {
        try harness.db.connection.query(
            "SELECT apns_token FROM devices WHERE user_id = $1 AND device_id = 'iphone'", [user.id]
        ).first!.string(0)
    }

    @Test(
        "revoked: a scheduled push, a retrying push and a reminder never reach the simulator; each delivery is cancelled (partner_revoked), counted on its request, and a replay skips the partner's failed rows"
    )
    func revocationCancelsEverythingQueued() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user()
        let apns = try Self.apnsToken(harness, user)
        let fcm = try #require(user.fcmToken)

        // A push that fails for good on both phones (a replay candidate), one that will be retrying, one scheduled
        // an hour ahead, and a reminder for tomorrow.
        harness.simulator.setFault(SimulatorFault(status: 400, reason: "BadCollapseId", times: 1), token: apns)
        let worker = try harness.workers.startWorker {
            $0.retry = RetryPolicy(maxAttempts: 4, baseDelay: .seconds(3_600), maxDelay: .seconds(3_600))
        }
        let failed = try harness.expect(Self.push(harness, partner, user), [202])
        let failedID = try #require(JSONParser.parse(failed.body)["requestId"]?.stringValue)
        try await harness.workers.waitUntil("the first push finished") {
            try harness.db.count("SELECT count(*) FROM delivery_history WHERE request_id = $1::uuid", [failedID]) == 2
        }
        // Retry-After an hour: the row waits for its retry, due long after the revocation.
        harness.simulator.setFault(
            SimulatorFault(status: 503, reason: "ServiceUnavailable", times: 1, retryAfter: 3_600),
            token: apns)
        let retrying = try harness.expect(Self.push(harness, partner, user), [202])
        let retryingID = try #require(JSONParser.parse(retrying.body)["requestId"]?.stringValue)
        try await harness.workers.waitUntil("the second push waits for its retry") {
            try harness.db.count(
                """
                SELECT count(*) FROM deliveries WHERE request_id = $1::uuid AND state = 'pending' AND attempts = 1
                """, [retryingID]) == 1
        }
        let scheduled = try harness.expect(
            Self.push(harness, partner, user, sendAt: Date().addingTimeInterval(3_600)),
            [202])
        let scheduledID = try #require(JSONParser.parse(scheduled.body)["requestId"]?.stringValue)
        let reminder = try harness.expect(
            harness.host(
                "POST", "/api/internal/users/\(user.id)/reminders",
                """
                {"miniAppId":"\(partner.miniApp)","title":"Pack drop","body":"Soon","at":"\(ISO8601.format(Date().addingTimeInterval(86_400)))"}
                """), [201])
        let reminderID = try #require(JSONParser.parse(reminder.body)["reminderId"]?.stringValue)
        let sentBefore = (harness.apnsPushes(to: apns).count, harness.fcmMessages(to: fcm).count)

        let revoked = try Self.admin(harness, "DELETE", partner.id)
        #expect(revoked.status == 200, "\(revoked.text)")

        // Retry (1 iPhone row), scheduled (2) and reminder (2): five rows cancelled, none sent.
        try await harness.workers.waitUntil("every queued row of the partner cancelled") {
            try harness.db.count(
                """
                SELECT count(*) FROM delivery_history
                 WHERE partner_id = $1::uuid AND outcome = 'cancelled' AND last_error = 'partner_revoked'
                """, [partner.id]) == 5 && harness.db.count("SELECT count(*) FROM deliveries") == 0
        }
        worker.drain()
        #expect(harness.apnsPushes(to: apns).count == sentBefore.0)
        #expect(harness.fcmMessages(to: fcm).count == sentBefore.1)
        for request in [retryingID, scheduledID] {
            let row = try #require(
                try harness.db.connection.query(
                    "SELECT sent, failed, deliveries FROM push_requests WHERE id = $1::uuid", [request]
                ).first)
            // Counted as final non-successes: the request is completed, nothing pending.
            #expect(try row.int(1) + row.int(0) == row.int(2), "\(request)")
        }
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM reminders WHERE id = $1::uuid AND status = 'cancelled'",
                [reminderID]) == 1)
        // Never kept for a replay, and the revoked partner's failed row is skipped by one.
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM delivery_history WHERE outcome = 'cancelled' AND payload IS NOT NULL") == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = harness.db.url
        let replay = try ChildProcess.run(
            TestEnvironment.binDirectory.appendingPathComponent("heraldctl"),
            ["replay", "--request", failedID, "--json"], environment: environment)
        let counts = try JSONParser.parse(replay.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(counts["matched"] == .number(1) && counts["replayed"] == .number(0), "\(replay.output)")
        #expect(counts["skipped"]?["partner_revoked"] == .number(1), "\(replay.output)")
        #expect(try harness.db.count("SELECT count(*) FROM deliveries") == 0)
        // The trail has the revocation.
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM admin_audit WHERE action = 'partner.revoked' AND partner_id = $1::uuid",
                [partner.id]) == 1)
    }

    @Test(
        "revoked: its active Live Activity ends at once on the iPhone and the Pixel (dismissed now, priority 10), a held update is never sent, and its open broadcast channel closes"
    )
    func revocationEndsActivities() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let fcm = try #require(user.fcmToken)
        let pushToStart = try #require(user.pushToStartToken)
        try harness.workers.startWorker()
        let activityID = try harness.activityID(harness.expect(harness.start(partner, user), [201]))
        try await harness.workers.waitUntil("the start on both phones") {
            harness.apnsPushes(to: pushToStart).count == 1 && harness.fcmMessages(to: fcm).count == 1
        }
        // An update made before the iPhone reported its update token is held for it.
        try harness.expect(harness.update(partner, activityID, #"{"state":{"currentStage":1,"progress":0.5}}"#), [200])
        try await harness.workers.waitUntil("the update on the Pixel") { harness.fcmMessages(to: fcm).count == 2 }
        // And a broadcast channel, made at APNs.
        let channelID = try LiveChannelTests.open(harness, partner, LiveChannelTests.openBody)
        try await harness.workers.waitUntil("the APNs channel") { harness.simulator.channels().count == 1 }
        let apnsChannel = try #require(harness.simulator.channels().first?.id)

        let before = Date()
        #expect(try Self.admin(harness, "DELETE", partner.id).status == 200)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE id = $1::uuid AND status = 'ended'",
                [activityID]) == 1)
        // The iPhone gets its update token now: what it holds is the end, not the update.
        let updateToken = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(activityID, updateToken), [200, 204])
        try await harness.workers.waitUntil("the end on both phones") {
            harness.apnsPushes(to: updateToken).count == 1 && harness.fcmMessages(to: fcm).count == 3
        }
        let end = harness.apnsPushes(to: updateToken)[0]
        let aps = try #require(LiveActivityHarness.aps(end))
        #expect(aps["event"] == .string("end"))
        #expect(end.header("apns-priority") == "10")
        let dismissal = try #require(aps["dismissal-date"]?.numberValue)
        #expect(dismissal <= Date().timeIntervalSince1970 && dismissal >= before.timeIntervalSince1970.rounded(.down))
        let data = try #require(LiveActivityHarness.data(harness.fcmMessages(to: fcm)[2]))
        #expect(data["event"] == .string("end"))
        let dismissAt = try #require(data["dismissAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(dismissAt.timeIntervalSince(before) < 5)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activity_events WHERE activity_id = $1::uuid AND kind = 'revoke-end'",
                [activityID]) == 1)
        // The channel's end is broadcast, and the channel ends.
        try await harness.workers.waitUntil("the channel's end broadcast and the channel ended") {
            try LiveChannelTests.broadcasts(harness, apnsChannel).contains { $0.aps?["event"]?.stringValue == "end" }
                && harness.db.count(
                    "SELECT count(*) FROM live_channels WHERE id = $1::uuid AND status = 'ended'",
                    [channelID]) == 1
        }
    }

    @Test(
        "suspended: the key is 403 partner_suspended, a queued push waits unclaimed with its attempts unspent, and arrives after resume; the trail has both changes"
    )
    func suspensionHoldsTheQueueUntilResume() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(pixel: false)
        let apns = try Self.apnsToken(harness, user)
        let accepted = try harness.expect(
            Self.push(harness, partner, user, sendAt: Date().addingTimeInterval(1)), [202])
        let requestID = try #require(JSONParser.parse(accepted.body)["requestId"]?.stringValue)

        let suspended = try Self.admin(harness, "POST", partner.id + "/suspend")
        #expect(suspended.status == 200, "\(suspended.text)")
        #expect(try JSONParser.parse(suspended.body)["suspendedAt"]?.stringValue != nil)
        // Within the intake's key cache, the key is refused.
        try await harness.workers.waitUntil("the key refused") {
            let response = try harness.request(
                "GET", "/api/partners/notifications/push/\(requestID)",
                token: partner.apiKey)
            let code = try JSONParser.parse(response.body)["error"]?["code"]
            return response.status == 403 && code == .string("partner_suspended")
        }
        // Due now, and no claim takes it: not the queue's walk, nor a claim of the row by its id.
        try await harness.workers.waitUntil("the push is due") {
            try harness.db.count(
                "SELECT count(*) FROM deliveries WHERE request_id = $1::uuid AND available_at <= now()",
                [requestID]) == 1
        }
        let store = DeliveryStore()
        let ids = try harness.db.connection.query("SELECT id FROM deliveries WHERE request_id = $1::uuid", [requestID])
            .rows.map { try $0.uuid(0) }
        let claimed = try harness.db.connection.transaction { connection in
            (
                try store.claim(on: connection, worker: "probe", limit: 10, leaseSeconds: 30, services: [.apns, .fcm]),
                try store.claim(
                    on: connection, worker: "probe", limit: 10, leaseSeconds: 30, services: [.apns, .fcm],
                    listed: ids)
            )
        }
        #expect(claimed.0.isEmpty && claimed.1.isEmpty)
        #expect(try Self.admin(harness, "POST", partner.id + "/suspend").status == 200, "suspending twice is fine")
        try harness.workers.startWorker()
        #expect(harness.apnsPushes(to: apns).isEmpty)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM deliveries WHERE request_id = $1::uuid AND attempts = 0",
                [requestID]) == 1)

        let resumed = try Self.admin(harness, "POST", partner.id + "/resume")
        #expect(resumed.status == 200, "\(resumed.text)")
        #expect(try JSONParser.parse(resumed.body)["suspendedAt"] == .null)
        try await harness.workers.waitUntil("the push after resume") { harness.apnsPushes(to: apns).count == 1 }
        #expect(harness.apnsPushes(to: apns)[0].status == 200)
        try await harness.workers.waitUntil("the key works again") {
            try harness.request("GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey).status
                == 200
        }
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM admin_audit WHERE partner_id = $1::uuid AND action IN ('partner.suspended', 'partner.resumed')
                """, [partner.id]) == 2)
        // Revoked partners cannot be suspended or resumed.
        #expect(try Self.admin(harness, "DELETE", partner.id).status == 200)
        let again = try Self.admin(harness, "POST", partner.id + "/resume")
        let againCode = try JSONParser.parse(again.body)["error"]?["code"]
        #expect(again.status == 409 && againCode == .string("partner_revoked"))
        #expect(try Self.admin(harness, "POST", UUID().uuidString.lowercased() + "/suspend").status == 404)
    }
}
