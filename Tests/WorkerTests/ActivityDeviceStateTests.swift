import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// The device's own word about a Live Activity: the host reports ActivityKit's state per device, a device
/// where the user dismissed the activity gets nothing more, an activity no device shows is `dismissed` for
/// the partner, and a push-to-start whose update token never comes back is `unconfirmed`.
@Suite(.requiresDatabase, .serialized)
struct ActivityDeviceStateTests {
    func state(_ harness: LiveActivityHarness, _ id: String, _ device: String, _ state: String) throws
        -> TestHTTPClient.Response
    {
        try harness.host(
            "PUT", "/api/internal/live-activities/\(id)/devices/\(device)/state", #"{"state":"\#(state)"}"#)
    }

    /// The partner's GET: status and each device's (platform, state), in device order.
    func view(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, _ id: String) throws
        -> (status: String?, devices: [String])
    {
        let json = try JSONParser.parse(harness.get(partner, id).body)
        let devices =
            json["devices"]?.arrayValue?.map {
                "\($0["platform"]?.stringValue ?? "?") \($0["state"]?.stringValue ?? "?")"
            } ?? []
        return (json["status"]?.stringValue, devices)
    }

    @Test func aDeviceWhereTheUserDismissedItGetsNothingMoreAndAllDismissedIsDismissed() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        try harness.db.connection.execute(
            "UPDATE partners SET webhook_url = 'https://hooks.example.com/h', webhook_secret = 'secret'")
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user))
        let fcm = try #require(user.fcmToken)
        let activityToken = LiveActivityHarness.hexToken()
        try await harness.workers.waitUntil("the start sent to both phones") { try harness.outstanding(id) == 0 }
        #expect(try view(harness, partner, id).devices == ["ios awaiting_token", "android active"])
        try harness.expect(harness.putToken(id, activityToken), [200])
        #expect(try view(harness, partner, id).devices == ["ios active", "android active"])

        // The user swipes it away on the Pixel: the next update goes to the iPhone only.
        let answer = try harness.expect(state(harness, id, "pixel", "dismissed"), [200])
        let json = try JSONParser.parse(answer.body)
        #expect(json["state"]?.stringValue == "dismissed")
        #expect(json["activityStatus"]?.stringValue == "active")
        try harness.expect(harness.update(partner, id, #"{"state":{"currentStage":1}}"#), [200])
        try await harness.workers.waitUntil("the update on the iPhone") {
            harness.apnsPushes(to: activityToken).count == 1
        }
        try await harness.workers.waitUntil("the outbox empty") { try harness.outstanding(id) == 0 }
        #expect(harness.fcmMessages(to: fcm).count == 1, "the Pixel got its start only")
        #expect(try view(harness, partner, id) == ("active", ["ios active", "android dismissed"]))

        // And ended on the iPhone too: dismissed for the partner, who can change it no more, told by webhook.
        let last = try JSONParser.parse(try harness.expect(state(harness, id, "iphone", "ended"), [200]).body)
        #expect(last["activityStatus"]?.stringValue == "dismissed")
        let read = try JSONParser.parse(harness.get(partner, id).body)
        #expect(read["status"]?.stringValue == "dismissed")
        #expect(read["endedAt"]?.stringValue != nil)
        let refused = try harness.update(partner, id, #"{"state":{"currentStage":2}}"#)
        #expect(refused.status == 409)
        #expect((try? JSONParser.parse(refused.body))?["error"]?["code"]?.stringValue == "activity_ended")
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM webhook_events WHERE type = 'activity.dismissed' AND subject_id = $1::uuid",
                [id]) == 1)
    }

    @Test func pendingRowsOfADismissedDeviceAreDroppedNotSent() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false, sessionWith: [partner.miniApp])
        // No worker yet: the start stays queued when the device's word comes.
        let id = try harness.activityID(harness.start(partner, user))
        try harness.expect(harness.update(partner, id, #"{"state":{"currentStage":1}}"#), [200])
        let answer = try JSONParser.parse(try harness.expect(state(harness, id, "pixel", "dismissed"), [200]).body)
        #expect(answer["activityStatus"]?.stringValue == "dismissed")
        #expect(try harness.outstanding(id) == 0)
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM delivery_history WHERE request_id = $1::uuid AND outcome = 'superseded'
                   AND last_error = 'dismissed_on_device'
                """, [id]) == 1)
        let worker = try harness.workers.startWorker()
        try await harness.workers.waitUntil("the worker's first claim") { worker.metrics.claims >= 1 }
        #expect(harness.fcmMessages(to: try #require(user.fcmToken)).isEmpty)
    }

    @Test func aStartThatCreatedNothingIsUnconfirmedAndItsHeldUpdateDropped() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let both = try harness.user(sessionWith: [partner.miniApp])
        let iPhoneOnly = try harness.user(pixel: false, sessionWith: [partner.miniApp])
        // The updates below must be held before the wait runs out: with 5 s and then 10 s, a machine running the whole
        // suite beside other work took longer from the starts' send to the second update, which met a dismissed
        // activity.
        let worker = try harness.workers.startWorker {
            $0.activitySweeper.startConfirmation = .seconds(20)
            $0.activitySweeper.interval = .milliseconds(200)
        }
        let shared = try harness.activityID(harness.start(partner, both))
        let alone = try harness.activityID(harness.start(partner, iPhoneOnly))
        try await harness.workers.waitUntil("both starts sent") {
            try harness.outstanding(shared) == 0 && harness.outstanding(alone) == 0
        }
        // Updates before any update token: held for the iPhones.
        try harness.expect(harness.update(partner, shared, #"{"state":{"currentStage":1}}"#), [200])
        try harness.expect(harness.update(partner, alone, #"{"state":{"currentStage":1}}"#), [200])
        #expect(try harness.db.count("SELECT count(*) FROM live_activity_targets WHERE held_event IS NOT NULL") == 2)

        try await harness.workers.waitUntil("the iPhones unconfirmed", timeout: .seconds(60)) {
            try harness.db.count("SELECT count(*) FROM live_activity_targets WHERE device_state = 'unconfirmed'") == 2
        }
        #expect(try harness.db.count("SELECT count(*) FROM live_activity_targets WHERE held_event IS NOT NULL") == 0)
        // The Pixel still shows the shared one; nothing shows the other.
        #expect(try view(harness, partner, shared) == ("active", ["ios unconfirmed", "android active"]))
        #expect(try view(harness, partner, alone) == ("dismissed", ["ios unconfirmed"]))
        #expect(worker.metrics.render().contains("herald_worker_activity_starts_unconfirmed_total 2"))

        // A late token proves the activity exists after all: that device is back, and the next update goes.
        let late = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(shared, late), [200])
        try harness.expect(harness.update(partner, shared, #"{"state":{"currentStage":2}}"#), [200])
        try await harness.workers.waitUntil("the update on the late token") { harness.apnsPushes(to: late).count == 1 }
    }

    /// Android 16: the Pixel shows the activity as an ordinary notification (the user turned Live Updates off).
    /// Recorded and shown, but the only device still shows it: the activity stays active and updates still go.
    @Test func notPromotedIsRecordedShownAndSendingContinues() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false, sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user))
        let fcm = try #require(user.fcmToken)
        try await harness.workers.waitUntil("the start on the Pixel") { try harness.outstanding(id) == 0 }

        let answer = try JSONParser.parse(try harness.expect(state(harness, id, "pixel", "not_promoted"), [200]).body)
        #expect(answer["state"]?.stringValue == "not_promoted")
        #expect(answer["activityStatus"]?.stringValue == "active")
        #expect(try view(harness, partner, id) == ("active", ["android not_promoted"]))

        try harness.expect(harness.update(partner, id, #"{"state":{"currentStage":1,"progress":0.5}}"#), [200])
        try await harness.workers.waitUntil("the update on the unpromoted Pixel") {
            harness.fcmMessages(to: fcm).count == 2
        }
        let update = try #require(harness.fcmMessages(to: fcm).last.flatMap(LiveActivityHarness.data))
        #expect(update["event"]?.stringValue == "update")
        #expect(update["shortCriticalText"]?.stringValue == "2/3", "the app can still promote it when allowed again")

        // Promoted again: back to active; the partner's end is an end, not a refusal.
        try harness.expect(state(harness, id, "pixel", "active"), [200])
        #expect(try view(harness, partner, id) == ("active", ["android active"]))
        try harness.expect(state(harness, id, "pixel", "not_promoted"), [200])
        let ended = try JSONParser.parse(try harness.expect(harness.end(partner, id), [200]).body)
        #expect(ended["status"]?.stringValue == "ended")
        try await harness.workers.waitUntil("the end on the Pixel") {
            harness.fcmMessages(to: fcm).last.flatMap(LiveActivityHarness.data)?["event"]?.stringValue == "end"
        }
        #expect(try view(harness, partner, id) == ("ended", ["android not_promoted"]))
    }

    @Test func notPromotedFromAnIPhoneIsRefusedAndNothingWritten() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        let refused = try state(harness, id, "iphone", "not_promoted")
        #expect(refused.status == 409)
        let error = try #require((try? JSONParser.parse(refused.body))?["error"])
        #expect(error["code"]?.stringValue == "not_android_device")
        #expect(error["field"]?.stringValue == "state")
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activity_targets WHERE activity_id = $1::uuid AND device_state IS NOT NULL",
                [id]) == 0)
        #expect(try view(harness, partner, id) == ("active", ["ios starting", "android starting"]))
        // Unknown device or activity: 404 before the platform is looked at.
        #expect(try state(harness, id, "tablet", "not_promoted").status == 404)
    }

    @Test func theDevicesWordIsValidated() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(pixel: false, sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        let bad = try state(harness, id, "iphone", "gone")
        #expect(bad.status == 400)
        #expect((try? JSONParser.parse(bad.body))?["error"]?["field"]?.stringValue == "state")
        #expect(try state(harness, id, "pixel", "dismissed").status == 404)
        #expect(try state(harness, UUID().uuidString.lowercased(), "iphone", "dismissed").status == 404)
        #expect(
            try harness.request(
                "PUT", "/api/internal/live-activities/\(id)/devices/iphone/state", token: partner.apiKey,
                json: #"{"state":"active"}"#
            ).status == 401)
        try harness.expect(state(harness, id, "iphone", "stale"), [200])
        #expect(try view(harness, partner, id).devices == ["ios stale"])
    }
}
