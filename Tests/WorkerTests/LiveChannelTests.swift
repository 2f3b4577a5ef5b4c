import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// iOS 18 broadcast channels end to end: the partner API on an intake in this process, a worker creating the
/// channel on the simulator's channel management port, one broadcast per change on its APNs port, and the end
/// and deletion at the partner's end or the TTL.
@Suite(.requiresDatabase, .serialized)
struct LiveChannelTests {
    static let openBody = """
        {"template":"countdown","attributes":{"title":"Drop 17","subtitle":"Sneakers"},
         "state":{"deadline":"2030-01-01T10:00:00Z","footnote":"Opens soon"},"ttlSeconds":3600}
        """

    @Test func aChannelIsCreatedBroadcastOncePerChangeEndedAndDeleted() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Drops")
        try harness.workers.startWorker()
        let opened = try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels",
                token: partner.apiKey, json: Self.openBody,
                headers: [("Idempotency-Key", "open-1")]), [201])
        let body = try JSONParser.parse(opened.body)
        let id = try #require(body["channelId"]?.stringValue)
        #expect(body["status"]?.stringValue == "opening")
        #expect(body["expiresAt"]?.stringValue != nil)

        // The same key answers the same channel, and opens no second one.
        let again = try harness.request(
            "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
            json: Self.openBody, headers: [("Idempotency-Key", "open-1")])
        let againID = try JSONParser.parse(again.body)["channelId"]?.stringValue
        #expect(again.status == 201 && againID == id)

        try await harness.workers.waitUntil("the APNs channel") { harness.simulator.channels().count == 1 }
        let apnsID = try #require(harness.simulator.channels().first?.id)
        #expect(harness.simulator.channels().first?.messageStoragePolicy == 1)
        #expect(harness.simulator.channels().first?.bundleID == harness.workers.credentials.apnsTopic)

        // The host lists it for the mini-app, with what the app needs to start the activity itself.
        try await harness.workers.waitUntil("the channel open") {
            try Self.status(harness, partner, id) == "open"
        }
        let list = try JSONParser.parse(
            harness.expect(
                harness.host("GET", "/api/internal/mini-apps/\(partner.miniApp)/live-channels"), [200]
            ).body)
        let listed = try #require(list["channels"]?.arrayValue?.first)
        #expect(list["channels"]?.arrayValue?.count == 1)
        #expect(listed["channelId"]?.stringValue == id)
        #expect(listed["apnsChannelId"]?.stringValue == apnsID)
        #expect(listed["template"]?.stringValue == "countdown")
        #expect(listed["attributesType"]?.stringValue == "MiniAppCountdownAttributes")
        #expect(listed["attributes"]?["title"]?.stringValue == "Drop 17")
        #expect(listed["attributes"]?["displayName"]?.stringValue == "Drops")
        #expect(listed["attributes"]?["activityId"]?.stringValue == id)
        #expect(listed["contentState"]?["footnote"]?.stringValue == "Opens soon")
        #expect(listed["contentState"]?["miniAppId"]?.stringValue == partner.miniApp)

        // One update: one broadcast on the channel, with the brand from the partner row.
        try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels/\(id)/update",
                token: partner.apiKey,
                json: #"{"state":{"footnote":"Live now"},"alert":{"title":"Drop is live"}}"#),
            [200])
        try await harness.workers.waitUntil("the broadcast") { Self.broadcasts(harness, apnsID).count == 1 }
        let update = try #require(Self.broadcasts(harness, apnsID).first)
        #expect(update.status == 200)
        #expect(update.apnsPushType == "liveactivity")
        #expect(update.apnsPriority == "10")
        #expect(update.aps?["event"]?.stringValue == "update")
        #expect(update.aps?["content-state"]?["footnote"]?.stringValue == "Live now")
        #expect(update.aps?["content-state"]?["displayName"]?.stringValue == "Drops")
        #expect(update.aps?["alert"]?["title"]?.stringValue != nil)
        #expect(update.header("apns-expiration").flatMap(Int.init) ?? 0 > Int(Date().timeIntervalSince1970))

        // The end: broadcast, then (its dismissal now) the APNs channel is deleted and the channel has ended.
        let now = ISO8601.format(Date())
        try harness.expect(
            harness.request(
                "DELETE", "/api/partners/live-activities/channels/\(id)",
                token: partner.apiKey, json: #"{"dismissAt":"\#(now)"}"#), [200])
        try await harness.workers.waitUntil("the end and the deletion") {
            try harness.simulator.channels().isEmpty && Self.status(harness, partner, id) == "ended"
        }
        let all = Self.broadcasts(harness, apnsID)
        #expect(all.count == 2)
        #expect(all.last?.aps?["event"]?.stringValue == "end")
        #expect(all.last?.aps?["dismissal-date"] != nil)
        let deletes = harness.simulator.received().filter { $0.kind == .channelDelete && $0.token == apnsID }
        #expect(deletes.map(\.status) == [204])

        // The audit: open, update, end, newest first, each sent; changes to an ended channel are refused.
        let channel = try JSONParser.parse(
            harness.expect(
                harness.request("GET", "/api/partners/live-activities/channels/\(id)", token: partner.apiKey), [200]
            ).body)
        #expect(channel["broadcasts"]?.numberValue == 2)
        let events = try #require(channel["events"]?.arrayValue)
        #expect(events.map { $0["kind"]?.stringValue } == ["end", "update", "open"])
        #expect(events.map { $0["outcome"]?.stringValue } == ["sent", "sent", "sent"])
        #expect(events.last?["idempotencyKey"]?.stringValue == "open-1")
        #expect(events[1]["alert"]?["title"]?.stringValue == "Drop is live")
        let late = try harness.request(
            "POST", "/api/partners/live-activities/channels/\(id)/update",
            token: partner.apiKey, json: #"{"state":{"footnote":"Again"}}"#)
        #expect(late.status == 409 && late.text.contains("channel_ended"))
        let after = try JSONParser.parse(
            harness.host("GET", "/api/internal/mini-apps/\(partner.miniApp)/live-channels").body)
        #expect(after["channels"]?.arrayValue?.isEmpty == true)
    }

    @Test func atItsTTLTheChannelsActivityEndsAndTheChannelIsDeleted() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        try harness.workers.startWorker()
        let body = Self.openBody.replacingOccurrences(of: "\"ttlSeconds\":3600", with: "\"ttlSeconds\":2")
        let id = try Self.open(harness, partner, body)
        // By the record of its creation: the whole life of a 2-second channel may pass between two looks.
        let created = { harness.simulator.received().first { $0.kind == .channelCreate && $0.status == 201 } }
        try await harness.workers.waitUntil("the APNs channel") { created() != nil }
        let apnsID = try #require(created()?.token)
        try await harness.workers.waitUntil("the TTL's end and the deletion", timeout: .seconds(20)) {
            try harness.simulator.channels().isEmpty && Self.status(harness, partner, id) == "ended"
        }
        let end = try #require(Self.broadcasts(harness, apnsID).last)
        #expect(Self.broadcasts(harness, apnsID).count == 1)
        #expect(end.aps?["event"]?.stringValue == "end")
        #expect(end.apnsPriority == "5")
        let channel = try JSONParser.parse(
            harness.request(
                "GET", "/api/partners/live-activities/channels/\(id)", token: partner.apiKey
            ).body)
        #expect(channel["events"]?.arrayValue?.map { $0["kind"]?.stringValue } == ["expire", "open"])
        #expect(channel["events"]?.arrayValue?.first?["outcome"]?.stringValue == "sent")
    }

    @Test func aBroadcastAnsweredWithA500IsRetriedAndAChannelAPNsForgotFails() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        try harness.workers.startWorker()
        let id = try Self.open(harness, partner, Self.openBody)
        try await harness.workers.waitUntil("the APNs channel") { harness.simulator.channels().count == 1 }
        let apnsID = try #require(harness.simulator.channels().first?.id)
        harness.simulator.setFault(SimulatorFault(status: 500, reason: "InternalServerError", times: 1), token: apnsID)
        try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels/\(id)/update",
                token: partner.apiKey, json: #"{"state":{"footnote":"Live"}}"#), [200])
        try await harness.workers.waitUntil("the retried broadcast", timeout: .seconds(20)) {
            Self.broadcasts(harness, apnsID).map(\.status) == [500, 200]
        }

        // APNs no longer knows the channel (deleted elsewhere, or expired): the next change fails it for good.
        harness.simulator.clearChannels()
        try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels/\(id)/update",
                token: partner.apiKey, json: #"{"state":{"footnote":"Closed"}}"#), [200])
        try await harness.workers.waitUntil("the channel failed") { try Self.status(harness, partner, id) == "failed" }
        let channel = try JSONParser.parse(
            harness.request(
                "GET", "/api/partners/live-activities/channels/\(id)", token: partner.apiKey
            ).body)
        #expect(channel["failure"]?.stringValue == "ChannelNotRegistered")
        #expect(channel["events"]?.arrayValue?.first?["outcome"]?.stringValue == "failed")
    }

    @Test func theAPIRefusesBadInputOtherPartnersChannelsAndChannelsBeyondTheMiniAppsCap() async throws {
        let harness = try LiveActivityHarness { $0.liveActivityBudgets.openChannelsPerMiniApp = 2 }
        let partner = try harness.partner()
        let other = try harness.partner()
        let id = try Self.open(harness, partner, Self.openBody)
        _ = try Self.open(harness, partner, Self.openBody)
        let third = try harness.request(
            "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
            json: Self.openBody)
        #expect(third.status == 409 && third.text.contains("too_many_channels"))
        #expect(try harness.budgetCount(partner, .openChannels) == 1)
        // Another mini-app has its own cap.
        _ = try Self.open(harness, other, Self.openBody)

        let unknownTemplate = try harness.request(
            "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
            json: #"{"template":"weather","attributes":{"title":"x"},"state":{}}"#)
        #expect(unknownTemplate.status == 422 && unknownTemplate.text.contains("unknown_template"))
        let recipient = try harness.request(
            "POST", "/api/partners/live-activities/channels", token: other.apiKey,
            json: Self.openBody.replacingOccurrences(
                of: "\"ttlSeconds\":3600", with: #""recipient":{"email":"a@b.c"}"#))
        #expect(recipient.status == 400 && recipient.text.contains("unknown_field"))
        let badState = try harness.request(
            "POST", "/api/partners/live-activities/channels/\(id)/update",
            token: partner.apiKey, json: #"{"state":{"deadline":"tomorrow"}}"#)
        #expect(badState.status == 422 || badState.status == 400)
        let foreign = try harness.request("GET", "/api/partners/live-activities/channels/\(id)", token: other.apiKey)
        #expect(foreign.status == 404)
        let foreignEnd = try harness.request(
            "DELETE", "/api/partners/live-activities/channels/\(id)", token: other.apiKey)
        #expect(foreignEnd.status == 404)
        let notUUID = try harness.request("GET", "/api/partners/live-activities/channels/abc", token: partner.apiKey)
        #expect(notUUID.status == 400)
        let noHost = try harness.request(
            "GET", "/api/internal/mini-apps/\(partner.miniApp)/live-channels",
            token: partner.apiKey)
        #expect(noHost.status == 401 || noHost.status == 403)
        // An end before any worker made the APNs channel tells no one and leaves nothing behind.
        try harness.expect(
            harness.request(
                "DELETE", "/api/partners/live-activities/channels/\(id)",
                token: partner.apiKey), [200])
        try harness.workers.startWorker()
        try await harness.workers.waitUntil("the unmade channel closed") {
            try Self.status(harness, partner, id) == "ended"
        }
        let channel = try JSONParser.parse(
            harness.request(
                "GET", "/api/partners/live-activities/channels/\(id)", token: partner.apiKey
            ).body)
        #expect(channel["events"]?.arrayValue?.first?["outcome"]?.stringValue == "not_sent")
        #expect(channel["broadcasts"]?.numberValue == 0)
    }

    @Test func alertedUpdatesBeyondTheChannelsHourlyBudgetGoOutSilent() async throws {
        let harness = try LiveActivityHarness { $0.liveActivityBudgets.alertedUpdatesPerHour = 1 }
        let partner = try harness.partner()
        try harness.workers.startWorker()
        let id = try Self.open(harness, partner, Self.openBody)
        try await harness.workers.waitUntil("the APNs channel") { harness.simulator.channels().count == 1 }
        let apnsID = try #require(harness.simulator.channels().first?.id)
        let path = "/api/partners/live-activities/channels/\(id)/update"
        let first = try harness.expect(
            harness.request(
                "POST", path, token: partner.apiKey,
                json: #"{"state":{"footnote":"1"},"alert":{"title":"One"}}"#), [200])
        #expect(try JSONParser.parse(first.body)["alert"]?.stringValue == "sent")
        try await harness.workers.waitUntil("the first broadcast") { Self.broadcasts(harness, apnsID).count == 1 }
        let second = try harness.expect(
            harness.request(
                "POST", path, token: partner.apiKey,
                json: #"{"state":{"footnote":"2"},"alert":{"title":"Two"}}"#), [200])
        #expect(try JSONParser.parse(second.body)["alert"]?.stringValue == "dropped_budget")
        try await harness.workers.waitUntil("the second broadcast") { Self.broadcasts(harness, apnsID).count == 2 }
        let records = Self.broadcasts(harness, apnsID)
        #expect(records.map(\.apnsPriority) == ["10", "5"])
        #expect(records[0].aps?["alert"] != nil && records[1].aps?["alert"] == nil)
        #expect(records[1].aps?["content-state"]?["footnote"]?.stringValue == "2")
        #expect(try harness.budgetCount(partner, .alertedUpdates) == 1)
    }

    @Test func channelCallsSpendThePartnersRateLimitAndAKeyedUpdateIsWrittenOnce() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(perMinute: 3)
        let id = try Self.open(harness, partner, Self.openBody)
        let path = "/api/partners/live-activities/channels/\(id)/update"
        let body = #"{"state":{"footnote":"Once"}}"#
        let first = try harness.expect(
            harness.request(
                "POST", path, token: partner.apiKey, json: body,
                headers: [("Idempotency-Key", "update-1")]), [200])
        // The retry is the stored answer: no second change, no second slot.
        let retry = try harness.expect(
            harness.request(
                "POST", path, token: partner.apiKey, json: body,
                headers: [("Idempotency-Key", "update-1")]), [200])
        #expect(retry.text == first.text)
        #expect(try harness.db.count("SELECT version FROM live_channels WHERE id = $1::uuid", [id]) == 2)
        #expect(try harness.db.count("SELECT count(*) FROM live_channel_events WHERE channel_id = $1::uuid", [id]) == 2)
        // Open and update spent two of the three slots; a third call spends the last, a fourth is refused.
        try harness.expect(
            harness.request(
                "DELETE", "/api/partners/live-activities/channels/\(id)",
                token: partner.apiKey), [200])
        let refused = try harness.request(
            "POST", "/api/partners/live-activities/channels", token: partner.apiKey,
            json: Self.openBody)
        #expect(refused.status == 429 && refused.text.contains("rate_limited"))
    }

    // MARK: - Helpers

    static func open(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, _ body: String) throws
        -> String
    {
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels",
                token: partner.apiKey, json: body), [201])
        return try #require(try JSONParser.parse(response.body)["channelId"]?.stringValue)
    }

    static func status(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, _ id: String) throws
        -> String?
    {
        try JSONParser.parse(
            harness.request(
                "GET", "/api/partners/live-activities/channels/\(id)",
                token: partner.apiKey
            ).body)["status"]?.stringValue
    }

    static func broadcasts(_ harness: LiveActivityHarness, _ apnsID: String) -> [SimulatorRecord] {
        harness.simulator.received().filter { $0.kind == .broadcast && $0.token == apnsID }
    }
}

/// A start from a channel: a push-to-start to the user's iPhone carrying `input-push-channel`, after which the
/// activity follows the channel (no update token, no per-activity changes) and ends with it.
@Suite(.requiresDatabase, .serialized)
struct LiveChannelStartTests {
    @Test func aStartFromAChannelGoesToTheIPhoneWithTheChannelAndEndsWithIt() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner(displayName: "Scores")
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try LiveChannelTests.open(harness, partner, LiveChannelTests.openBody)
        let early = try harness.request(
            "POST", "/api/partners/live-activities/channels/\(id)/starts",
            token: partner.apiKey, json: #"{"recipient":{"email":"\#(user.email)"}}"#)
        #expect(early.status == 409 && early.text.contains("channel_opening"))

        let worker = try harness.workers.startWorker {
            $0.activitySweeper.startConfirmation = .seconds(1)
            $0.activitySweeper.interval = .milliseconds(100)
        }
        try await harness.workers.waitUntil("the channel open") {
            try LiveChannelTests.status(harness, partner, id) == "open"
        }
        let apnsID = try #require(harness.simulator.channels().first?.id)
        let started = try harness.expect(
            harness.request(
                "POST", "/api/partners/live-activities/channels/\(id)/starts", token: partner.apiKey,
                json: #"{"recipient":{"email":"\#(user.email)"},"alert":{"title":"Kick-off"}}"#,
                headers: [("Idempotency-Key", "channel-start-1")]), [201])
        let activityID = try harness.activityID(started)
        let token = try #require(user.pushToStartToken)
        try await harness.workers.waitUntil("the start on the iPhone") { harness.apnsPushes(to: token).count == 1 }
        let start = try #require(harness.apnsPushes(to: token).first)
        #expect(start.status == 200)
        #expect(start.aps?["event"]?.stringValue == "start")
        #expect(start.aps?["input-push-channel"]?.stringValue == apnsID)
        #expect(start.aps?["input-push-token"] == nil)
        #expect(start.aps?["attributes"]?["title"]?.stringValue == "Drop 17")
        // Android has no broadcast channels: the Pixel gets nothing.
        #expect(harness.fcmMessages(to: try #require(user.fcmToken)).isEmpty)

        // No update token ever comes, and the device is not taken for one whose start created nothing.
        // Past the 1 s start confirmation on the database's clock (the sweeper's), then a whole pass of the sweeper.
        try await harness.workers.waitUntil("the start past its confirmation") {
            try harness.db.count(
                "SELECT count(*) FROM live_activity_targets WHERE start_sent_at <= now() - interval '1 second'") >= 1
        }
        let passes = worker.activitySweepPasses
        try await harness.workers.waitUntil("a sweep begun after it") { worker.activitySweepPasses >= passes + 2 }
        let activity = try JSONParser.parse(harness.get(partner, activityID).body)
        #expect(activity["channelId"]?.stringValue == id)
        #expect(activity["devices"]?.arrayValue?.map { $0["state"]?.stringValue } == ["following"])
        #expect(activity["status"]?.stringValue == "active")
        let update = try harness.update(partner, activityID, #"{"state":{"footnote":"x"}}"#)
        #expect(update.status == 409 && update.text.contains("activity_follows_channel"))

        // The channel's end ends the user's activity too.
        try harness.expect(
            harness.request(
                "DELETE", "/api/partners/live-activities/channels/\(id)",
                token: partner.apiKey), [200])
        let ended = try JSONParser.parse(harness.get(partner, activityID).body)
        #expect(ended["status"]?.stringValue == "ended")
        #expect(harness.apnsPushes(to: token).count == 1)
        // The start retried with its key after the channel ended is the stored answer, not a refusal.
        let retried = try harness.request(
            "POST", "/api/partners/live-activities/channels/\(id)/starts", token: partner.apiKey,
            json: #"{"recipient":{"email":"\#(user.email)"},"alert":{"title":"Kick-off"}}"#,
            headers: [("Idempotency-Key", "channel-start-1")])
        #expect(retried.status == 201)
        #expect(try harness.activityID(retried) == activityID)
    }
}
