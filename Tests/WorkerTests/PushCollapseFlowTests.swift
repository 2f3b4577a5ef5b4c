import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Simulator
import Testing

/// A push's `collapseKey` through the intake, the outbox and a worker to the simulator: the collapse id both
/// upstreams receive, and a newer push superseding an older one still queued for the same device.
@Suite(.requiresDatabase, .serialized)
struct PushCollapseFlowTests {
    /// The collapse id of `key` for `miniApp`, as Sources/Store/Migrations/functions/collapse_id.sql derives it.
    static func collapseID(_ miniApp: String, _ key: String) -> String {
        Digest.hex(Digest.sha256(Array("\(miniApp)\n\(key)".utf8)))
    }

    static func push(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, to user: LiveActivityHarness.User,
        title: String, extra: String = ""
    ) throws -> String {
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"\#(title)","body":"b"\#(extra)}"#),
            [202])
        return try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
    }

    static func status(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, _ requestID: String
    ) throws -> JSONValue {
        try JSONParser.parse(
            try harness.request("GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey).body)
    }

    static func received(_ harness: LiveActivityHarness, title: String) -> [SimulatorRecord] {
        harness.simulator.received().filter { record in
            record.status == 200
                && (record.service == .apns
                    ? record.aps?["alert"]?["title"]?.stringValue?.hasSuffix(title) == true
                    : record.payload?["message"]?["data"]?["title"]?.stringValue?.hasSuffix(title) == true)
        }
    }

    @Test("pushes with one collapseKey reach both phones with one collapse id, another mini-app's key with its own")
    func oneKeyOneCollapseID() async throws {
        let harness = try LiveActivityHarness()
        let user = try harness.user()
        let (deposits, other) = (try harness.partner(), try harness.partner())
        try harness.workers.startWorker()
        // A quote in the key: escaped in the JSON body, the same characters in the payloads.
        let key = "deposit 0xabc \"1\""
        let keyJSON = #","collapseKey":"deposit 0xabc \"1\"""#
        let first = try Self.push(harness, deposits, to: user, title: "Pending 1/6", extra: keyJSON)
        // Sent before the next one with its key is written: else the newer one supersedes it, rightly, when a busy
        // machine leaves it queued that long.
        try await harness.workers.waitUntil("the first push sent") {
            try Self.status(harness, deposits, first)["sent"] == .number(2)
        }
        _ = try Self.push(harness, deposits, to: user, title: "Pending 2/6", extra: keyJSON)
        _ = try Self.push(harness, other, to: user, title: "Other", extra: keyJSON)
        _ = try Self.push(harness, deposits, to: user, title: "Unkeyed")
        try await harness.workers.waitUntil("every push on both phones") {
            ["Pending 1/6", "Pending 2/6", "Other", "Unkeyed"].allSatisfy {
                Self.received(harness, title: $0).count == 2
            }
        }

        for (partner, titles) in [(deposits, ["Pending 1/6", "Pending 2/6"]), (other, ["Other"])] {
            let id = Self.collapseID(partner.miniApp, key)
            for title in titles {
                let records = Self.received(harness, title: title)
                let iphone = try #require(records.first { $0.service == .apns })
                #expect(iphone.apnsCollapseID == id)
                #expect(iphone.payload?["collapseKey"] == .string(key))
                let pixel = try #require(records.first { $0.service == .fcm })
                #expect(pixel.payload?["message"]?["android"]?["collapse_key"] == .string(id))
                #expect(pixel.payload?["message"]?["data"]?["collapseKey"] == .string(key))
            }
        }
        // Without a key: the delivery id, on APNs, and no collapse key on FCM.
        let unkeyed = Self.received(harness, title: "Unkeyed")
        let iphone = try #require(unkeyed.first { $0.service == .apns })
        #expect(iphone.apnsCollapseID == iphone.payload?["deliveryId"]?.stringValue)
        #expect(iphone.payload?["collapseKey"] == nil)
        let pixel = try #require(unkeyed.first { $0.service == .fcm })
        #expect(pixel.payload?["message"]?["android"]?["collapse_key"] == nil)
    }

    @Test("a newer push with the same collapseKey supersedes the queued older one on each device; others go out")
    func newerSupersedesQueued() async throws {
        let harness = try LiveActivityHarness { $0.consoleEnabled = true }
        let user = try harness.user()
        let partner = try harness.partner()
        // Queued before any worker runs: a push scheduled an hour ahead, then a newer one with its key, then one
        // without a key and one with another key.
        let later = ISO8601.format(Date().addingTimeInterval(3600))
        let older = try Self.push(
            harness, partner, to: user, title: "Older", extra: #","collapseKey":"k","sendAt":"\#(later)""#)
        let newer = try Self.push(harness, partner, to: user, title: "Newer", extra: #","collapseKey":"k""#)
        let unkeyed = try Self.push(harness, partner, to: user, title: "Unkeyed")
        let another = try Self.push(harness, partner, to: user, title: "Another", extra: #","collapseKey":"j""#)
        try harness.workers.startWorker()

        // The older push's record does not wait for its sendAt: it is due at once, as superseded.
        try await harness.workers.waitUntil("every request completed") {
            try [older, newer, unkeyed, another].allSatisfy {
                try Self.status(harness, partner, $0)["status"] == .string("completed")
            }
        }
        let olderStatus = try Self.status(harness, partner, older)
        #expect(olderStatus["superseded"] == .number(2))
        #expect(olderStatus["sent"] == .number(0) && olderStatus["failed"] == .number(0))
        #expect(olderStatus["pending"] == .number(0))
        for request in [newer, unkeyed, another] {
            let status = try Self.status(harness, partner, request)
            #expect(status["sent"] == .number(2) && status["superseded"] == .number(0), "\(request)")
        }
        // The operator's console counts them alike: superseded, nothing pending.
        let console = try JSONParser.parse(
            try harness.request(
                "GET", "/api/admin/console/requests/\(older)", token: LiveActivityHarness.adminToken
            ).body)
        #expect(console["superseded"] == .number(2) && console["pending"] == .number(0), "\(console)")
        #expect(Self.received(harness, title: "Older").isEmpty)
        #expect(Self.received(harness, title: "Newer").count == 2)
    }
}
