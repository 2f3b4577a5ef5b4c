import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Simulator
import Testing

/// Reminders end to end: scheduled through the host API of an intake, delivered at their time
/// by a worker to the simulator over HTTP/2, with the payloads checked as the simulator received them;
/// a cancelled reminder and one for a user who opted out meanwhile are never sent.
@Suite(.requiresDatabase, .serialized)
struct ReminderFlowTests {
    static let publicURL = "https://herald.test"

    static func path(_ userID: String) -> String { "/api/internal/users/\(userID)/reminders" }

    static func body(_ partner: LiveActivityHarness.Partner, at: Date, deepLink: String? = nil) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("miniAppId", .string(partner.miniApp)), ("title", .string("Pack drop")),
            ("body", .string("Your pack opens now")),
        ]
        if let deepLink { members.append(("deepLink", .string(deepLink))) }
        members.append(("at", .string(ISO8601.format(at))))
        return JSONWriter.string(.object(members))
    }

    /// The iPhone's APNs token, which the harness does not keep.
    static func apnsToken(_ harness: LiveActivityHarness, _ user: LiveActivityHarness.User) throws -> String {
        try harness.db.connection.query(
            "SELECT apns_token FROM devices WHERE user_id = $1 AND device_id = 'iphone'", [user.id]
        ).first!.string(0)
    }

    /// The signature the host would compute over a received payload's signed fields (SignedEnvelope): an
    /// APNs body's alert, `isGroup` and custom keys, or every FCM data field but `sig` and `kid`.
    static func expectedSignature(_ payload: JSONValue) -> String {
        var signed: [(key: String, value: String)] = []
        var skipped: Set<String> = ["sig", "kid"]
        if let alert = payload["aps"]?["alert"] {
            signed = [
                ("title", alert["title"]?.stringValue ?? ""), ("body", alert["body"]?.stringValue ?? ""),
                ("isGroup", "true"),
            ]
            skipped.formUnion(["aps", "isGroup"])
        }
        for member in payload.objectMembers ?? [] where !skipped.contains(member.key) {
            signed.append((member.key, member.value.stringValue ?? ""))
        }
        return Base64URL.encode(
            Digest.hmacSHA256(
                key: LiveActivityHarness.signingKey,
                message: SignedEnvelope.canonicalBytes(signed)))
    }

    @Test func aReminderReachesBothPhonesAtItsTimeBrandedSignedAndWithTheIcon() async throws {
        let harness = try LiveActivityHarness(configure: { $0.rules.publicURL = Self.publicURL })
        let partner = try harness.partner(displayName: "Pull")
        let svg =
            #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>"#
        let icon = try TestHTTPClient.send(
            port: harness.port, method: "PUT", path: "/api/admin/mini-app-partners/\(partner.id)/icon",
            headers: [
                ("Content-Type", "image/svg+xml"), ("Authorization", "Bearer \(LiveActivityHarness.adminToken)"),
            ],
            body: Array(svg.utf8))
        #expect(icon.status == 200, "\(icon.text)")
        let user = try harness.user()
        let apnsToken = try Self.apnsToken(harness, user)
        let fcmToken = try #require(user.fcmToken)
        try harness.workers.startWorker()

        let link = "basedapp://miniapp/\(partner.miniApp)/packs/7"
        let scheduled = try harness.expect(
            harness.host(
                "POST", Self.path(user.id), Self.body(partner, at: Date().addingTimeInterval(2), deepLink: link)),
            [201])
        let json = try JSONParser.parse(scheduled.body)
        let reminderID = try #require(json["reminderId"]?.stringValue)
        let at = try #require(json["at"]?.stringValue.flatMap(ISO8601.parse))
        let listed = try harness.host("GET", Self.path(user.id))
        #expect((try JSONParser.parse(listed.body))["reminders"]?.arrayValue?.count == 1)

        try await harness.workers.waitUntil("the reminder on both phones") {
            harness.apnsPushes(to: apnsToken).count == 1 && harness.fcmMessages(to: fcmToken).count == 1
        }
        let image = "\(Self.publicURL)/icons/\(partner.miniApp)/256.png"

        let apns = harness.apnsPushes(to: apnsToken)[0]
        #expect(apns.status == 200)
        #expect(apns.receivedAt >= at, "not sent before its time")
        #expect(apns.header("apns-push-type") == "alert")
        let payload = try #require(apns.payload)
        let alert = try #require(payload["aps"]?["alert"])
        #expect(alert["title"] == .string("[Pull] Pack drop"))
        #expect(alert["body"] == .string("Your pack opens now"))
        #expect(payload["channel"] == .string("mini-app"))
        #expect(payload["miniAppId"] == .string(partner.miniApp))
        #expect(payload["deepLink"] == .string(link))
        #expect(payload["senderName"] == .string("Pull"))
        #expect(payload["imageUrl"] == .string(image))
        let deliveryID = try #require(payload["deliveryId"]?.stringValue)
        #expect(apns.header("apns-collapse-id") == deliveryID)
        #expect(payload["kid"] == .string("k1"))
        #expect(payload["sig"] == .string(Self.expectedSignature(payload)))

        let android = harness.fcmMessages(to: fcmToken)[0]
        #expect(android.status == 200)
        #expect(android.receivedAt >= at, "not sent before its time")
        let data = try #require(LiveActivityHarness.data(android))
        #expect(data["title"] == .string("[Pull] Pack drop"))
        #expect(data["deepLink"] == .string(link))
        #expect(data["imageUrl"] == .string(image))
        #expect(data["sig"] == .string(Self.expectedSignature(data)))

        // Sent: gone from the list, past cancelling, and counted on its audit row.
        try await harness.workers.waitUntil("the audit row counts both sends") {
            try harness.db.count(
                """
                SELECT p.sent FROM reminders r JOIN push_requests p ON p.id = r.request_id
                                                                   AND p.created_at = r.request_created_at
                 WHERE r.id = $1::uuid
                """, [reminderID]) == 2
        }
        let after = try JSONParser.parse(try harness.host("GET", Self.path(user.id)).body)
        #expect(after["reminders"] == .array([]))
        let cancel = try harness.host("DELETE", Self.path(user.id) + "/\(reminderID)")
        #expect(cancel.status == 409)
        #expect((try JSONParser.parse(cancel.body))["error"]?["code"] == .string("reminder_already_sent"))
    }

    @Test func aCancelledReminderAndOneForAUserWhoOptedOutAreNeverSent() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let cancelling = try harness.user()
        let optingOut = try harness.user()
        let control = try harness.user()
        try harness.workers.startWorker()
        // Time enough to cancel and opt out before the worker takes them.
        let at = Date().addingTimeInterval(3)

        let cancelled = try harness.expect(
            harness.host("POST", Self.path(cancelling.id), Self.body(partner, at: at)), [201])
        let cancelledID = try #require((try JSONParser.parse(cancelled.body))["reminderId"]?.stringValue)
        try harness.expect(harness.host("DELETE", Self.path(cancelling.id) + "/\(cancelledID)"), [204])
        try harness.expect(harness.host("POST", Self.path(optingOut.id), Self.body(partner, at: at)), [201])
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(optingOut.id)/opt-outs/\(partner.miniApp)"), [204])
        try harness.expect(harness.host("POST", Self.path(control.id), Self.body(partner, at: at)), [201])
        // Opted out now: a new reminder is refused outright.
        let refused = try harness.host("POST", Self.path(optingOut.id), Self.body(partner, at: at))
        #expect(refused.status == 409)
        #expect((try JSONParser.parse(refused.body))["error"]?["code"] == .string("opted_out"))

        let controlAPNs = try Self.apnsToken(harness, control)
        let controlFCM = try #require(control.fcmToken)
        try await harness.workers.waitUntil("the control reminder on both phones") {
            harness.apnsPushes(to: controlAPNs).count == 1 && harness.fcmMessages(to: controlFCM).count == 1
        }
        // Due at the same moment: the opted-out user's deliveries were claimed with the control's, and
        // finished unsent.
        try await harness.workers.waitUntil("the opted-out user's deliveries suppressed") {
            try harness.db.count(
                "SELECT count(*) FROM delivery_history WHERE user_id = $1 AND outcome = 'suppressed'",
                [optingOut.id]) == 2
        }
        for user in [cancelling, optingOut] {
            #expect(harness.apnsPushes(to: try Self.apnsToken(harness, user)).isEmpty, "\(user.id)")
            #expect(harness.fcmMessages(to: try #require(user.fcmToken)).isEmpty, "\(user.id)")
        }
        // The cancelled reminder's deliveries left the outbox unsent: no history, nothing queued.
        #expect(
            try harness.db.count(
                """
                SELECT (SELECT count(*) FROM deliveries WHERE user_id = $1)
                     + (SELECT count(*) FROM delivery_history WHERE user_id = $1)
                """, [cancelling.id]) == 0)
    }
}
