import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// An activity's whole life through the intake, the outbox, the workers and the simulator, with the
/// payloads checked field by field as the simulator received them.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityFlowTests {
    @Test func startUpdateLateTokenAndEndOnAnIPhoneAndAPixel() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Pull")
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()

        let started = try harness.start(
            partner, user, ttlSeconds: 1_800,
            alert: #"{"title":"Deposit started","body":"0x001 1/6"}"#)
        let id = try harness.activityID(started)
        let startJSON = try JSONParser.parse(started.body)
        #expect(startJSON["status"]?.stringValue == "active")
        let expiresAt = try #require(startJSON["expiresAt"]?.stringValue.flatMap(ISO8601.parse))

        // The start: to the push-to-start token on the iPhone, a HIGH data message on the Pixel.
        let pushToStart = try #require(user.pushToStartToken)
        let fcmToken = try #require(user.fcmToken)
        try await harness.workers.waitUntil("the start on both phones") {
            harness.apnsPushes(to: pushToStart).count == 1 && harness.fcmMessages(to: fcmToken).count == 1
        }
        let start = harness.apnsPushes(to: pushToStart)[0]
        #expect(start.status == 200)
        #expect(start.header("apns-push-type") == "liveactivity")
        #expect(start.header("apns-topic") == harness.workers.credentials.apnsTopic + ".push-type.liveactivity")
        #expect(start.header("apns-priority") == "10")
        #expect(start.header("apns-collapse-id") == nil)
        // The header is the stored expiry rounded up to the second; the API shows that expiry cut to the
        // millisecond, so an expiry in the first millisecond of a second may round up one second later.
        let expiration = expiresAt.timeIntervalSince1970
        let expirations = Set([expiration, expiration + 0.001].map { String(Int($0.rounded(.up))) })
        #expect(expirations.contains(start.header("apns-expiration") ?? ""), "\(expirations)")
        let aps = try #require(LiveActivityHarness.aps(start))
        #expect(aps["event"]?.stringValue == "start")
        #expect(aps["attributes-type"]?.stringValue == "MiniAppProgressAttributes")
        #expect(aps["input-push-token"]?.numberValue == 1)
        #expect(aps["stale-date"]?.numberValue == expiresAt.timeIntervalSince1970.rounded(.down))
        #expect(aps["alert"]?["title"]?.stringValue == "[Pull] Deposit started")
        #expect(aps["alert"]?["body"]?.stringValue == "0x001 1/6")
        #expect(aps["attributes"]?["activityId"]?.stringValue == id)
        #expect(aps["attributes"]?["title"]?.stringValue == "Deposit confirmation")
        #expect(aps["attributes"]?["displayName"]?.stringValue == "Pull")
        #expect(aps["attributes"]?["miniAppId"]?.stringValue == partner.miniApp)
        let startState = try #require(aps["content-state"])
        #expect(startState["currentStage"]?.numberValue == 0)
        #expect(startState["progress"]?.numberValue == 0.16)
        #expect(startState["stages"]?.arrayValue?.count == 3)
        #expect(startState["displayName"]?.stringValue == "Pull")
        #expect(startState["miniAppId"]?.stringValue == partner.miniApp)
        let startTimestamp = try #require(aps["timestamp"]?.numberValue)

        let android = try #require(harness.fcmMessages(to: fcmToken).first)
        #expect(android.status == 200)
        let message = try #require(android.payload?["message"])
        #expect(message["android"]?["priority"]?.stringValue == "HIGH")
        #expect(message["android"]?["collapse_key"]?.stringValue == id)
        let data = try #require(message["data"])
        #expect(data["channel"]?.stringValue == "mini-app-live")
        #expect(data["miniAppId"]?.stringValue == partner.miniApp)
        #expect(data["activityId"]?.stringValue == id)
        #expect(data["template"]?.stringValue == "progress")
        #expect(data["event"]?.stringValue == "start")
        #expect(data["displayName"]?.stringValue == "Pull")
        #expect(data["expiresAt"]?.stringValue == ISO8601.format(expiresAt))
        let androidState = try #require(data["state"]?.stringValue.flatMap { try? JSONParser.parse($0) })
        #expect(androidState["statusText"]?.stringValue == "Confirmations: 1/6")
        #expect(data["sig"]?.stringValue != nil && data["kid"]?.stringValue == "k1")

        // Two updates before the iPhone's activity token is known: the iPhone gets nothing yet.
        try harness.expect(harness.update(partner, id, #"{"state":{"currentStage":1,"progress":0.5}}"#), [200])
        let second = try harness.expect(
            harness.update(
                partner, id, #"{"state":{"currentStage":2,"progress":1.0,"statusText":"Completed"}}"#,
                method: "PATCH"), [200])
        #expect((try JSONParser.parse(second.body))["state"]?["currentStage"]?.numberValue == 2)
        try await harness.workers.waitUntil("the Pixel has the newest state") {
            harness.fcmMessages(to: fcmToken).last.flatMap(LiveActivityHarness.data)?["state"]?.stringValue?
                .contains(#""currentStage":2"#) == true
        }
        #expect(harness.fcmMessages(to: fcmToken).allSatisfy { $0.status == 200 })
        let silent = try #require(harness.fcmMessages(to: fcmToken).last?.payload?["message"])
        #expect(silent["android"]?["priority"]?.stringValue == "NORMAL")
        #expect(harness.simulator.received().filter { $0.service == .apns }.count == 1)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activity_targets WHERE activity_id = $1::uuid AND held_event = 'update'",
                [id]) == 1)

        // The token arrives: exactly one update, with the newest state, to the activity's own token.
        let activityToken = LiveActivityHarness.hexToken(bytes: 80)
        let stored = try harness.expect(harness.putToken(id, activityToken), [200])
        #expect((try JSONParser.parse(stored.body))["result"]?.stringValue == "sent")
        try await harness.workers.waitUntil("the held update on the iPhone") {
            harness.apnsPushes(to: activityToken).count == 1
        }
        let update = harness.apnsPushes(to: activityToken)[0]
        #expect(update.status == 200)
        #expect(update.header("apns-push-type") == "liveactivity")
        #expect(update.header("apns-priority") == "5")
        let updateAPS = try #require(LiveActivityHarness.aps(update))
        #expect(updateAPS["event"]?.stringValue == "update")
        #expect(updateAPS["content-state"]?["currentStage"]?.numberValue == 2)
        #expect(updateAPS["content-state"]?["statusText"]?.stringValue == "Completed")
        #expect(updateAPS["attributes-type"] == nil && updateAPS["alert"] == nil)
        #expect(try #require(updateAPS["timestamp"]?.numberValue) > startTimestamp)
        // The same token again changes nothing and sends nothing.
        #expect(
            (try JSONParser.parse(try harness.putToken(id, activityToken).body))["result"]?.stringValue == "unchanged")

        // The end: to the activity token with a dismissal date, and to the Pixel.
        let ended = try harness.expect(
            harness.end(partner, id, #"{"alert":{"title":"Deposit complete","body":"499998.96 USDC"}}"#), [200])
        #expect((try JSONParser.parse(ended.body))["status"]?.stringValue == "ended")
        try await harness.workers.waitUntil("the end on both phones") {
            harness.apnsPushes(to: activityToken).count == 2
                && harness.fcmMessages(to: fcmToken).last.flatMap(LiveActivityHarness.data)?["event"]?.stringValue
                    == "end"
        }
        let end = harness.apnsPushes(to: activityToken)[1]
        #expect(end.status == 200)
        #expect(end.header("apns-priority") == "10")
        let endAPS = try #require(LiveActivityHarness.aps(end))
        #expect(endAPS["event"]?.stringValue == "end")
        #expect(endAPS["dismissal-date"]?.numberValue != nil)
        #expect(endAPS["alert"]?["title"]?.stringValue == "[Pull] Deposit complete")
        #expect(try #require(endAPS["timestamp"]?.numberValue) > (updateAPS["timestamp"]?.numberValue ?? .infinity))
        let androidEnd = try #require(harness.fcmMessages(to: fcmToken).last.flatMap(LiveActivityHarness.data))
        #expect(androidEnd["dismissAt"]?.stringValue != nil)
        #expect(androidEnd["alertTitle"]?.stringValue == "[Pull] Deposit complete")

        let read = try JSONParser.parse(try harness.expect(harness.get(partner, id), [200]).body)
        #expect(read["status"]?.stringValue == "ended")
        #expect(read["state"]?["currentStage"]?.numberValue == 2)
        #expect(read["endedAt"]?.stringValue != nil)
        #expect(read["template"]?.stringValue == "progress")
        try await harness.workers.waitUntil("the outbox is empty") { try harness.outstanding(id) == 0 }
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM delivery_history WHERE request_id = $1::uuid AND outcome = 'sent'", [id])
                == harness.simulator.received().count)
    }
}

/// Coalescing, replacement, expiry and dead tokens, end to end.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityDeliveryTests {
    /// Updates queued while nothing could be sent become ONE send of the newest state per phone: on the
    /// Pixel the pending start takes each new state; on the iPhone, updates wait for the activity token.
    @Test func manyUpdatesWhileNothingCanBeSentGiveOneSendOfTheNewestState() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        for stage in 1...20 {
            try harness.expect(harness.update(partner, id, #"{"state":{"progress":\#(Double(stage) / 20)}}"#), [200])
        }
        #expect(try harness.outstanding(id) == 2)
        try harness.workers.startWorker()
        let pushToStart = try #require(user.pushToStartToken), fcm = try #require(user.fcmToken)
        try await harness.workers.waitUntil("the starts") { try harness.outstanding(id) == 0 }
        // The iPhone's start was pending too: it went out once, with the newest state.
        let starts = harness.apnsPushes(to: pushToStart)
        #expect(starts.count == 1)
        #expect(LiveActivityHarness.aps(starts[0])?["content-state"]?["progress"]?.numberValue == 1.0)
        let messages = harness.fcmMessages(to: fcm)
        #expect(messages.count == 1)
        let data = try #require(messages.first.flatMap(LiveActivityHarness.data))
        #expect(data["event"]?.stringValue == "start")
        #expect(data["state"]?.stringValue?.contains(#""progress":1"#) == true)

        // Now the start is out and the token unknown: twenty more updates are held, and the token
        // releases exactly one update with the last of them.
        for stage in 1...20 {
            try harness.expect(
                harness.update(partner, id, #"{"state":{"currentStage":\#(stage % 3),"statusText":"step \#(stage)"}}"#),
                [200])
        }
        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(id, token), [200])
        try await harness.workers.waitUntil("the held update") { harness.apnsPushes(to: token).count == 1 }
        try await harness.workers.waitUntil("the outbox is empty") { try harness.outstanding(id) == 0 }
        #expect(harness.apnsPushes(to: token).count == 1)
        #expect(
            LiveActivityHarness.aps(harness.apnsPushes(to: token)[0])?["content-state"]?["statusText"]?.stringValue
                == "step 20")
        // The Pixel saw the newest state last, with fewer messages than updates whenever they coalesced.
        let last = try #require(harness.fcmMessages(to: fcm).last.flatMap(LiveActivityHarness.data))
        #expect(last["state"]?.stringValue?.contains("step 20") == true)
        #expect(harness.fcmMessages(to: fcm).count <= 21)
    }

    /// Updates that arrive while a send is in flight queue ONE new row, which each later update rewrites:
    /// the phone gets the send in flight, then the newest state, and nothing in between.
    @Test func updatesWhileASendIsInFlightCoalesceIntoOneSend() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(iphone: false, sessionWith: [partner.miniApp])
        let fcm = try #require(user.fcmToken)
        // The Pixel's first message takes a second to answer: the start is in flight meanwhile.
        harness.simulator.setFault(SimulatorFault(times: 1, delayMs: 1_000), token: fcm)
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user))
        try harness.workers.waitUntilBlocking("the start in flight") {
            try harness.db.count(
                "SELECT count(*) FROM deliveries WHERE activity_id = $1::uuid AND state = 'leased'", [id]) == 1
        }
        for step in 1...10 {
            try harness.expect(harness.update(partner, id, #"{"state":{"statusText":"update \#(step)"}}"#), [200])
        }
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM deliveries WHERE activity_id = $1::uuid AND state = 'pending'", [id]) == 1)
        // The fan-out's ids are time-ordered (herald_uuid_v7, sql/functions/uuid_v7.sql), as the intake's are.
        let rowIDs = try harness.db.connection.query("SELECT id FROM deliveries WHERE activity_id = $1::uuid", [id])
            .rows
            .map { try $0.uuid(0) }
        #expect(rowIDs.count == 2 && rowIDs.allSatisfy { UUIDv7.timestamp(of: $0) != nil })
        try await harness.workers.waitUntil("both sends") { try harness.outstanding(id) == 0 }
        let events = harness.fcmMessages(to: fcm).compactMap(LiveActivityHarness.data)
        #expect(events.map { $0["event"]?.stringValue } == ["start", "update"])
        #expect(events.last?["state"]?.stringValue?.contains("update 10") == true)
    }

    /// A second start for the same user and mini-app replaces the first: the old one is ended (status
    /// `replaced`, an end dismissing it at once) and the new one started.
    @Test func aNewStartReplacesTheActiveOne() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let first = try harness.activityID(harness.start(partner, user))
        let token = LiveActivityHarness.hexToken()
        try await harness.workers.waitUntil("the first start") { try harness.outstanding(first) == 0 }
        try harness.expect(harness.putToken(first, token), [200])
        let second = try harness.activityID(
            harness.start(
                partner, user, template: "status",
                state: #"{"statusLabel":"Pending","statusVariant":"pending"}"#))
        #expect(second != first)
        try await harness.workers.waitUntil("the replacement") {
            try harness.outstanding(first) == 0 && harness.outstanding(second) == 0
        }
        let old = try JSONParser.parse(try harness.get(partner, first).body)
        #expect(old["status"]?.stringValue == "replaced")
        #expect(old["endedAt"]?.stringValue != nil)
        #expect((try JSONParser.parse(try harness.get(partner, second).body))["status"]?.stringValue == "active")
        let end = try #require(harness.apnsPushes(to: token).last.flatMap(LiveActivityHarness.aps))
        #expect(end["event"]?.stringValue == "end")
        let dismissal = try #require(end["dismissal-date"]?.numberValue)
        #expect(abs(dismissal - Date().timeIntervalSince1970) < 60)
        let starts = harness.apnsPushes(to: try #require(user.pushToStartToken))
        #expect(starts.count == 2)
        #expect(LiveActivityHarness.aps(starts[1])?["attributes-type"]?.stringValue == "MiniAppStatusAttributes")
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE user_id = $1 AND status = 'active'", [user.id]) == 1)
    }

    /// At the TTL the workers end every activity exactly once, however many workers sweep.
    @Test func activitiesEndAtTheirTTLExactlyOnceWithSeveralWorkers() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        var ids: [String] = []
        var users: [LiveActivityHarness.User] = []
        for _ in 0..<3 {
            try harness.workers.startWorker { $0.activitySweeper.interval = .milliseconds(50) }
        }
        for _ in 0..<12 {
            let user = try harness.user(iphone: false, sessionWith: [partner.miniApp])
            users.append(user)
            ids.append(try harness.activityID(harness.start(partner, user, ttlSeconds: 3)))
        }
        try await harness.workers.waitUntil("every activity expired") {
            try harness.db.count("SELECT count(*) FROM live_activities WHERE status = 'expired'") == ids.count
        }
        try await harness.workers.waitUntil("the ends went out") {
            try harness.db.count("SELECT count(*) FROM deliveries") == 0
        }
        for user in users {
            let messages = harness.fcmMessages(to: try #require(user.fcmToken))
            // One end each. (A start still unsent at its TTL goes out as nothing, or, when it was in
            // flight, is followed by the end: never two ends.)
            let events = messages.compactMap { LiveActivityHarness.data($0)?["event"]?.stringValue }
            #expect(events == ["start", "end"] || events == ["end"], "\(events)")
            let end = try #require(messages.last.flatMap(LiveActivityHarness.data))
            #expect(end["dismissAt"]?.stringValue == end["expiresAt"]?.stringValue)
        }
        for id in ids {
            #expect((try JSONParser.parse(try harness.get(partner, id).body))["status"]?.stringValue == "expired")
        }
        // An update after the TTL is refused.
        let late = try harness.update(partner, ids[0], #"{"state":{"progress":0.9}}"#)
        #expect(late.status == 409 && late.text.contains("activity_ended"))
    }

    /// A dead activity token is retired (the device's alert token is not); a dead push-to-start token
    /// is retired on the device, and the next start finds no device that can show it.
    @Test func deadTokensAreRetiredWhereTheyLive() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(pixel: false, sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the start") { try harness.outstanding(id) == 0 }
        let token = LiveActivityHarness.hexToken()
        harness.simulator.setFault(SimulatorFault(status: 410, reason: "Unregistered"), token: token)
        try harness.expect(harness.putToken(id, token), [200])
        try harness.expect(harness.update(partner, id, #"{"state":{"progress":0.4}}"#), [200])
        try await harness.workers.waitUntil("the update failed") { try harness.outstanding(id) == 0 }
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM live_activity_targets
                 WHERE activity_id = $1::uuid AND update_token_invalidated_at IS NOT NULL
                """, [id]) == 1)
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = $1 AND apns_token_invalidated_at IS NULL
                   AND apns_push_to_start_invalidated_at IS NULL
                """, [user.id]) == 1)
        // The next update waits for a new token instead of going to the dead one.
        try harness.expect(harness.update(partner, id, #"{"state":{"progress":0.5}}"#), [200])
        #expect(try harness.outstanding(id) == 0)
        let fresh = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(id, fresh), [200])
        try await harness.workers.waitUntil("the update on the new token") { harness.apnsPushes(to: fresh).count == 1 }

        // A dead push-to-start token: the device can no longer start activities.
        let pushToStart = try #require(user.pushToStartToken)
        harness.simulator.setFault(SimulatorFault(status: 410, reason: "Unregistered"), token: pushToStart)
        let next = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the start failed") { try harness.outstanding(next) == 0 }
        #expect(
            try harness.db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = $1 AND apns_push_to_start_invalidated_at IS NOT NULL
                   AND apns_token_invalidated_at IS NULL
                """, [user.id]) == 1)
        let refused = try harness.start(partner, user)
        #expect(refused.status == 409 && refused.text.contains("no_live_device"))
    }
}
