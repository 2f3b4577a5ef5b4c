import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Simulator
import Testing

/// What became of a push, end to end: a push through the intake, a worker and the simulator; the host reports
/// its deliveries received, opened and dismissed by the `deliveryId` each payload carried; the partner sees the
/// counts in the request's status and a signed push.opened webhook; the console shows the partner's rates.
@Suite("Delivery events end to end", .requiresDatabase, .serialized)
struct DeliveryEventFlowTests {
    /// The delivery id the payload carried.
    static func deliveryID(_ record: SimulatorRecord) -> String? {
        record.service == .apns
            ? record.payload?["deliveryId"]?.stringValue
            : record.payload?["message"]?["data"]?["deliveryId"]?.stringValue
    }

    static func report(
        _ harness: LiveActivityHarness, _ deliveryID: String, _ body: String
    ) throws -> (status: Int, json: JSONValue) {
        let response = try harness.host("POST", "/api/internal/deliveries/\(deliveryID)/events", body)
        return (response.status, (try? JSONParser.parse(response.body)) ?? .null)
    }

    @Test("reports are counted once in the status, coalesced into one signed push.opened, shown in the console")
    func reportedAndCounted() async throws {
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
        let (ana, ben) = (try harness.user(), try harness.user())
        let partner = try harness.partner()
        let partnerID = try #require(UUID(uuidString: partner.id))
        let receiver = try WebhookTests.Receiver()
        defer { receiver.stop() }
        try WebhookTests.setWebhook(harness.workers, partner: partnerID, url: receiver.url)
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(ana.email)","\#(ben.email)"]},"title":"Packs","body":"b"}"#),
            [202])
        let requestID = try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
        let worker = try harness.workers.startWorker()
        try await harness.workers.waitUntil("the push on four phones") {
            try PushCollapseFlowTests.status(harness, partner, requestID)["sent"] == .number(4)
        }
        worker.drain()
        let records = PushCollapseFlowTests.received(harness, title: "Packs")
        func pixel(_ user: LiveActivityHarness.User) throws -> String {
            try #require(records.first { $0.service == .fcm && $0.token == user.fcmToken }.flatMap(Self.deliveryID))
        }
        let anaPixel = try pixel(ana)
        let benPixel = try pixel(ben)
        let iphones = records.filter { $0.service == .apns }.compactMap(Self.deliveryID)
        #expect(iphones.count == 2)

        // The extension reports received, the tap handler opened; an open alone counts as received too.
        #expect(try Self.report(harness, iphones[0], #"{"event":"received"}"#).status == 201)
        let opened = try Self.report(harness, iphones[0], #"{"event":"opened"}"#)
        #expect(opened.status == 201)
        #expect(opened.json["recorded"] == .bool(true) && opened.json["event"] == .string("opened"))
        #expect(opened.json["deliveryId"] == .string(iphones[0]))
        #expect(try Self.report(harness, anaPixel, #"{"event":"opened","userId":"\#(ana.id)"}"#).status == 201)
        #expect(try Self.report(harness, benPixel, #"{"event":"dismissed"}"#).status == 201)
        // A repeat is 200 and changes nothing; it answers the first report's time.
        let repeated = try Self.report(harness, iphones[0], #"{"event":"opened"}"#)
        #expect(repeated.status == 200 && repeated.json["recorded"] == .bool(false))
        #expect(repeated.json["at"] == opened.json["at"])

        let status = try PushCollapseFlowTests.status(harness, partner, requestID)
        #expect(status["sent"] == .number(4) && status["received"] == .number(3), "\(status)")
        #expect(status["opened"] == .number(2) && status["dismissed"] == .number(1), "\(status)")
        let stored = try harness.db.count("SELECT count(*) FROM delivery_events")
        #expect(stored == 6)

        // Refused: nothing written, nothing counted.
        let unknown = try Self.report(harness, UUIDv7.make(at: Date()).uuidString.lowercased(), #"{"event":"opened"}"#)
        #expect(unknown.status == 404 && unknown.json["error"]?["code"] == .string("delivery_not_found"))
        #expect(unknown.json["error"]?["field"] == .string("deliveryId"))
        let future = ISO8601.format(Date().addingTimeInterval(3_600))
        let bad: [(String, String, Int, String, String)] = [
            (iphones[1], #"{"event":"opened","at":"\#(future)"}"#, 422, "event_time_in_future", "at"),
            (iphones[1], #"{"event":"clicked"}"#, 400, "invalid_field", "event"),
            (iphones[1], #"{"event":"opened","userId":"\#(ana.id)-x"}"#, 404, "delivery_not_found", "deliveryId"),
            ("not-a-uuid", #"{"event":"opened"}"#, 400, "invalid_field", "deliveryId"),
            (iphones[1], "{", 400, "invalid_json", ""),
        ]
        for (id, body, code, error, field) in bad {
            let answer = try Self.report(harness, id, body)
            #expect(answer.status == code, "\(body)")
            #expect(answer.json["error"]?["code"] == .string(error), "\(body)")
            if !field.isEmpty { #expect(answer.json["error"]?["field"] == .string(field), "\(body)") }
        }
        let partnerCall = try harness.request(
            "POST", "/api/internal/deliveries/\(iphones[1])/events", token: partner.apiKey, json: #"{"event":"opened"}"#
        )
        #expect(partnerCall.status == 401)
        #expect(try harness.db.count("SELECT count(*) FROM delivery_events") == stored)
        #expect(try PushCollapseFlowTests.status(harness, partner, requestID)["opened"] == .number(2))

        // One push.opened for both opens, due a coalescing delay later: a worker whose clock is past it sends it.
        #expect(try harness.db.count("SELECT count(*) FROM webhook_events WHERE type = 'push.opened'") == 1)
        let clock = TestClock(Date().addingTimeInterval(Double(DeliveryEventReport.openedWebhookDelaySeconds + 1)))
        let sender = try WebhookTests.startWorker(harness.workers, clock: clock)
        defer { sender.drain() }
        try harness.workers.waitUntilBlocking("the push.opened webhook") {
            receiver.all.contains { (try? JSONParser.parse($0.body))?["type"] == .string("push.opened") }
        }
        let hook = try #require(
            receiver.all.first { (try? JSONParser.parse($0.body))?["type"] == .string("push.opened") })
        #expect(
            WebhookSignature.verify(
                header: hook.signature, secret: WebhookTests.secret, body: hook.body,
                now: Int(clock.now.timeIntervalSince1970)))
        let body = try JSONParser.parse(hook.body)
        #expect(body["id"] == .string(hook.eventID))
        #expect(body["requestId"] == .string(requestID))
        #expect(body["sent"] == .number(4) && body["received"] == .number(3), "\(body)")
        #expect(body["opened"] == .number(2) && body["dismissed"] == .number(1), "\(body)")

        // The console's partner row: delivered 3 of 4, opened 2 of 4.
        let console = try JSONParser.parse(
            try harness.request("GET", "/api/admin/console/partners", token: LiveActivityHarness.adminToken).body)
        let row = try #require(console["partners"]?.arrayValue?.first { $0["miniAppId"] == .string(partner.miniApp) })
        let engagement = row["engagement"]
        #expect(engagement?["sent"] == .number(4) && engagement?["received"] == .number(3), "\(row)")
        #expect(engagement?["opened"] == .number(2) && engagement?["windowDays"] == .number(7), "\(row)")
        #expect(engagement?["deliveryRate"] == .number(0.75) && engagement?["openRate"] == .number(0.5), "\(row)")
    }
}
