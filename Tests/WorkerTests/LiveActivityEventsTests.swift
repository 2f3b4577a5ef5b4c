import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The audit of Live Activities (`GET .../live-activities/{activityId}/events`): one row per start, update,
/// end, TTL expiry and replacement's end, with its inputs, the devices it went to and the outcomes of its
/// deliveries as the workers record them against the simulator.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityEventsTests {
    /// A start, an update held for the iPhone's token and taken over by the next update (superseded there),
    /// and an end: four events, newest first, each with what the partner sent and what became of it.
    @Test func aStartTwoUpdatesAndAnEndAreFourEventsWithTheirInputsAndOutcomes() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        try harness.workers.startWorker()
        let id = try harness.activityID(
            harness.start(
                partner, user, ttlSeconds: 1_800,
                alert: #"{"title":"Deposit started"}"#,
                idempotencyKey: "start-1"))
        try await harness.workers.waitUntil("the start on both phones") { try harness.outstanding(id) == 0 }

        // No update token from the iPhone yet: the update goes to the Pixel and is held for the iPhone.
        try harness.expect(harness.update(partner, id, #"{"state":{"currentStage":1,"progress":0.5}}"#), [200])
        try await harness.workers.waitUntil("the first update on the Pixel") { try harness.outstanding(id) == 0 }
        let held = try harness.events(partner, id)
        #expect(held.events.count == 2)
        let first = try #require(held.events.first)
        #expect(first["kind"]?.stringValue == "update")
        #expect(Self.counts(first) == [2, 1, 1, 1, 0, 0, 1])

        // The next update takes the iPhone's held place (the first one is superseded there), the token sends it.
        try harness.expect(
            harness.update(
                partner, id,
                """
                {"state":{"currentStage":2,"progress":1.0,"statusText":"Completed"},"alert":{"title":"All done"},
                 "ttlSeconds":3600}
                """, method: "PATCH"), [200])
        let token = LiveActivityHarness.hexToken()
        try harness.expect(harness.putToken(id, token), [200])
        try await harness.workers.waitUntil("the second update on both phones") {
            try harness.outstanding(id) == 0 && harness.apnsPushes(to: token).count == 1
        }
        let dismissAt = ISO8601.format(Date().addingTimeInterval(600))
        let endBody = #"{"alert":{"title":"Deposit complete"},"dismissAt":"\#(dismissAt)"}"#
        try harness.expect(harness.end(partner, id, endBody), [200])
        try await harness.workers.waitUntil("the end on both phones") {
            try harness.outstanding(id) == 0 && harness.apnsPushes(to: token).count == 2
        }

        let page = try harness.events(partner, id)
        #expect(page.next == nil)
        #expect(page.events.map { $0["kind"]?.stringValue } == ["end", "update", "update", "start"])
        let (end, second, update, start) = (page.events[0], page.events[1], page.events[2], page.events[3])
        // [total, apns, fcm, sent, failed, superseded, pending]
        #expect(Self.counts(start) == [2, 1, 1, 2, 0, 0, 0])
        #expect(Self.counts(update) == [2, 1, 1, 1, 0, 1, 0])
        #expect(Self.counts(second) == [2, 1, 1, 2, 0, 0, 0])
        #expect(Self.counts(end) == [2, 1, 1, 2, 0, 0, 0])

        #expect(start["state"]?["stages"]?.arrayValue?.count == 3)
        #expect(start["state"]?["currentStage"]?.numberValue == 0)
        #expect(start["alert"]?["title"]?.stringValue == "Deposit started")
        #expect(start["ttlSeconds"]?.numberValue == 1_800)
        #expect(start["idempotencyKey"]?.stringValue == "start-1")
        // An update records its patch as sent, not the merged state.
        #expect(Set(update["state"]?.objectMembers?.map(\.key) ?? []) == ["currentStage", "progress"])
        #expect(update["alert"] == nil && update["ttlSeconds"] == nil && update["idempotencyKey"] == nil)
        #expect(second["alert"]?["title"]?.stringValue == "All done")
        #expect(second["ttlSeconds"]?.numberValue == 3_600)
        #expect(second["state"]?["statusText"]?.stringValue == "Completed")
        // An end records the final state.
        #expect(end["state"]?["currentStage"]?.numberValue == 2 && end["state"]?["stages"] != nil)
        #expect(end["alert"]?["title"]?.stringValue == "Deposit complete")
        let recorded = try #require(end["dismissAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(recorded.timeIntervalSince(try #require(ISO8601.parse(dismissAt)))) < 0.002)
        let times = page.events.compactMap { $0["createdAt"]?.stringValue.flatMap(ISO8601.parse) }
        #expect(times.count == 4 && times == times.sorted(by: >))
        #expect(Set(page.events.compactMap { $0["id"]?.stringValue }).count == 4)
    }

    /// Updates that rewrite pending starts (nothing sent yet) leave each earlier event superseded on both phones,
    /// and the list pages through them newest first.
    @Test func coalescedEventsAreSupersededAndTheListPages() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        for step in 1...4 {
            try harness.expect(harness.update(partner, id, #"{"state":{"statusText":"step \#(step)"}}"#), [200])
        }
        var kinds: [String] = []
        var ids: [String] = []
        var cursor: String?
        repeat {
            let page = try harness.events(partner, id, query: "limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
            #expect(page.events.count <= 2)
            kinds += page.events.compactMap { $0["kind"]?.stringValue }
            ids += page.events.compactMap { $0["id"]?.stringValue }
            cursor = page.next
        } while cursor != nil && kinds.count < 10
        #expect(kinds == ["update", "update", "update", "update", "start"])
        #expect(Set(ids).count == 5)
        #expect(try harness.events(partner, id, query: "limit=100").events.count == 5)
        #expect(try harness.events(partner, id).events.count == 5)

        try harness.workers.startWorker()
        try await harness.workers.waitUntil("the start with the newest state") { try harness.outstanding(id) == 0 }
        let events = try harness.events(partner, id).events
        #expect(Self.counts(events[0]) == [2, 1, 1, 2, 0, 0, 0])
        for older in events.dropFirst() {
            #expect(Self.counts(older) == [2, 1, 1, 0, 0, 2, 0], "\(older)")
        }
    }

    /// The TTL's end is an `expire` event, and a new start's end of the old activity a `replace-end` event on
    /// the old one; both written by Herald, with the activity's last state.
    @Test func theTTLAndAReplacementWriteTheirEndsEvents() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        try harness.workers.startWorker { $0.activitySweeper.interval = .milliseconds(50) }

        let pixelOnly = try harness.user(iphone: false, sessionWith: [partner.miniApp])
        let expiring = try harness.activityID(harness.start(partner, pixelOnly, ttlSeconds: 2))
        try await harness.workers.waitUntil("the start") { try harness.outstanding(expiring) == 0 }
        try await harness.workers.waitUntil("the expiry's end went out") {
            try harness.db.count(
                "SELECT count(*) FROM live_activities WHERE id = $1::uuid AND status = 'expired'",
                [expiring]) == 1 && harness.outstanding(expiring) == 0
        }
        let expired = try harness.events(partner, expiring).events
        #expect(expired.map { $0["kind"]?.stringValue } == ["expire", "start"])
        #expect(Self.counts(expired[0]) == [1, 0, 1, 1, 0, 0, 0])
        #expect(expired[0]["state"]?["currentStage"]?.numberValue == 0)
        #expect(expired[0]["alert"] == nil && expired[0]["idempotencyKey"] == nil)

        let user = try harness.user(sessionWith: [partner.miniApp])
        let old = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the first start") { try harness.outstanding(old) == 0 }
        try harness.expect(harness.putToken(old, LiveActivityHarness.hexToken()), [200])
        let new = try harness.activityID(harness.start(partner, user))
        try await harness.workers.waitUntil("the replacement") {
            try harness.outstanding(old) == 0 && harness.outstanding(new) == 0
        }
        let replaced = try harness.events(partner, old).events
        #expect(replaced.map { $0["kind"]?.stringValue } == ["replace-end", "start"])
        #expect(Self.counts(replaced[0]) == [2, 1, 1, 2, 0, 0, 0])
        #expect(replaced[0]["state"]?["progress"]?.numberValue == 0.16)
        #expect(try harness.events(partner, new).events.map { $0["kind"]?.stringValue } == ["start"])
    }

    @Test func anotherPartnersActivityIsNotFoundAndBadPagingIsRefused() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let other = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))

        for response in [
            try harness.eventsResponse(other, id),
            try harness.eventsResponse(partner, UUIDv7.make(at: Date()).uuidString.lowercased()),
            try harness.eventsResponse(partner, UUID().uuidString.lowercased()),
        ] {
            #expect(response.status == 404, "\(response.text)")
            #expect(Self.error(response)?["code"]?.stringValue == "not_found")
        }
        for limit in ["0", "101", "-1", "ten", "", "1.5", "0020x"] {
            let response = try harness.eventsResponse(partner, id, query: "limit=\(limit)")
            #expect(response.status == 400, "\(limit): \(response.text)")
            #expect(Self.error(response)?["code"]?.stringValue == "invalid_field")
            #expect(Self.error(response)?["field"]?.stringValue == "limit")
        }
        // 22 base64url characters whose last one carries bits a 16-byte id leaves empty, or any other shape.
        for cursor in ["abc", "%21%21", "AAAAAAAAAAAAAAAAAAAAAB", "AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAA+AAAAAAAAAAA"] {
            let response = try harness.eventsResponse(partner, id, query: "cursor=\(cursor)")
            #expect(response.status == 400, "\(cursor): \(response.text)")
            #expect(Self.error(response)?["field"]?.stringValue == "cursor")
        }
        #expect(try harness.eventsResponse(partner, id, query: "limit=1").status == 200)
        // Any cursor of the documented shape is a position: the events before it (here the first id there is).
        let earliest = try harness.events(partner, id, query: "cursor=AAAAAAAAAAAAAAAAAAAAAA")
        #expect(earliest.events.isEmpty && earliest.next == nil)
        let latest = try harness.events(partner, id, query: "cursor=_____________________w")
        #expect(latest.events.map { $0["kind"]?.stringValue } == ["start"])
    }

    /// [total, apns, fcm, sent, failed, superseded, pending] of an event.
    static func counts(_ event: JSONValue) -> [Int] {
        let devices = event["devices"]
        let values = [
            devices?["total"], devices?["apns"], devices?["fcm"], event["sent"], event["failed"],
            event["superseded"], event["pending"],
        ]
        return values.map { Int($0?.numberValue ?? -1) }
    }

    static func error(_ response: TestHTTPClient.Response) -> JSONValue? {
        (try? JSONParser.parse(response.body))?["error"]
    }
}

extension LiveActivityHarness {
    func eventsResponse(_ partner: Partner, _ activityID: String, query: String = "") throws
        -> TestHTTPClient.Response
    {
        try request(
            "GET", "/api/partners/live-activities/\(activityID)/events" + (query.isEmpty ? "" : "?\(query)"),
            token: partner.apiKey)
    }

    /// One page of an activity's events: the events and `nextCursor`.
    func events(_ partner: Partner, _ activityID: String, query: String = "") throws
        -> (events: [JSONValue], next: String?)
    {
        let response = try expect(eventsResponse(partner, activityID, query: query), [200])
        let json = try JSONParser.parse(response.body)
        return (json["events"]?.arrayValue ?? [], json["nextCursor"]?.stringValue)
    }
}
