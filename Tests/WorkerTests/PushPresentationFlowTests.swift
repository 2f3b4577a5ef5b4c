import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Testing

/// A partner push's `aps.thread-id`, `aps.category`, `aps.sound` and `aps.interruption-level` from the admin's partner
/// settings, the host's categories and the push body, through the intake, the outbox and a worker to the simulator,
/// checked as it was received.
@Suite(.requiresDatabase, .serialized)
struct PushPresentationFlowTests {
    struct Case {
        let partnerFields: String
        let interruptionLevel: String?
        /// What the simulator must receive in `aps` besides `alert` and `mutable-content`.
        let sound: String?
        let level: String?
    }

    @Test("each partner's thread, sound and interruption level reach the iPhone as sent; the Pixel's data carries none")
    func deliveredAsRendered() async throws {
        let harness = try LiveActivityHarness()
        let cases = [
            Case(
                partnerFields: #","sound":"chime.caf","allowTimeSensitive":true"#, interruptionLevel: "time-sensitive",
                sound: "chime.caf", level: "time-sensitive"),
            Case(partnerFields: #","sound":null"#, interruptionLevel: "passive", sound: nil, level: "passive"),
            Case(partnerFields: "", interruptionLevel: nil, sound: "default", level: nil),
            Case(
                partnerFields: #","allowTimeSensitive":true"#, interruptionLevel: "active", sound: "default", level: nil
            ),
        ]
        let user = try harness.user()
        let fcmToken = try #require(user.fcmToken)
        try harness.workers.startWorker()

        var partners: [(LiveActivityHarness.Partner, Case, requestID: String)] = []
        for test in cases {
            let partner = try harness.partner(extra: test.partnerFields)
            let level = test.interruptionLevel.map { #","interruptionLevel":"\#($0)""# } ?? ""
            let response = try harness.expect(
                harness.request(
                    "POST", "/api/partners/notifications/push", token: partner.apiKey,
                    json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Deposit","body":"1/6"\#(level)}"#),
                [202])
            let requestID = try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
            partners.append((partner, test, requestID))
        }

        func received(_ partner: LiveActivityHarness.Partner, _ service: SimulatorService) -> [SimulatorRecord] {
            harness.simulator.received().filter { record in
                record.service == service && record.status == 200
                    && (service == .apns
                        ? record.payload?["miniAppId"] == .string(partner.miniApp)
                        : record.payload?["message"]?["data"]?["miniAppId"] == .string(partner.miniApp))
            }
        }
        try await harness.workers.waitUntil("every push on both phones") {
            partners.allSatisfy { received($0.0, .apns).count == 1 && received($0.0, .fcm).count == 1 }
        }

        for (partner, test, requestID) in partners {
            let iphone = try #require(received(partner, .apns).first)
            #expect(iphone.apnsPushType == "alert")
            #expect(iphone.apnsCollapseID == iphone.payload?["deliveryId"]?.stringValue)
            var aps = try #require(iphone.aps?.objectMembers)
            #expect(aps.prefix(2).map(\.key) == ["alert", "mutable-content"])
            #expect(aps.first?.value["title"] == .string("[Pull] Deposit"))
            aps.removeFirst(2)
            var expected: [(key: String, value: JSONValue)] = [("thread-id", .string(partner.miniApp))]
            if let sound = test.sound { expected.append(("sound", .string(sound))) }
            if let level = test.level { expected.append(("interruption-level", .string(level))) }
            #expect(JSONWriter.string(.object(aps)) == JSONWriter.string(.object(expected)), "\(partner.miniApp)")

            let pixel = try #require(received(partner, .fcm).first)
            #expect(pixel.token == fcmToken)
            let data = try #require(pixel.payload?["message"]?["data"]?.objectMembers).map(\.key)
            #expect(
                !data.contains {
                    ["thread-id", "threadId", "sound", "interruption-level", "interruptionLevel"].contains($0)
                })

            try await harness.workers.waitUntil("request \(requestID) completed") {
                let status = try JSONParser.parse(
                    try harness.request(
                        "GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey
                    ).body)
                return status["status"] == .string("completed") && status["sent"] == .number(2)
            }
        }
    }

    @Test("a push's category reaches the iPhone as aps.category and the Pixel as data.category, both signed")
    func categoryDelivered() async throws {
        let harness = try LiveActivityHarness(configure: {
            $0.rules.notificationCategories = try! NotificationCategories(parsing: "INVITE,reply.quick")
        })
        let partner = try harness.partner()
        let user = try harness.user()
        try harness.workers.startWorker()
        let response = try harness.expect(
            harness.request(
                "POST", "/api/partners/notifications/push", token: partner.apiKey,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"Join the raid","category":"INVITE","#
                    + #""data":{"raidId":"r-42"}}"#),
            [202])
        let requestID = try #require(try JSONParser.parse(response.body)["requestId"]?.stringValue)
        func received(_ service: SimulatorService) -> SimulatorRecord? {
            harness.simulator.received().first { $0.service == service && $0.status == 200 }
        }
        try await harness.workers.waitUntil("the push on both phones") {
            received(.apns) != nil && received(.fcm) != nil
        }

        let iphone = try #require(received(.apns))
        var aps = try #require(iphone.aps?.objectMembers)
        #expect(aps.prefix(2).map(\.key) == ["alert", "mutable-content"])
        aps.removeFirst(2)
        let expected = #"{"thread-id":"\#(partner.miniApp)","category":"INVITE","sound":"default"}"#
        #expect(JSONWriter.string(.object(aps)) == expected)
        #expect(iphone.payload?["category"] == nil)
        let apns = try #require(iphone.payload)
        let pixel = try #require(received(.fcm))
        let data = try #require(pixel.payload?["message"]?["data"])
        #expect(data["category"] == .string("INVITE"))
        #expect(data["raidId"] == .string("r-42"))

        // The Python reference verifier (scripts/verify_envelope.py) accepts both as received, and refuses them
        // once the category is changed.
        let now = Int(Date().timeIntervalSince1970)
        for (name, payload, path) in [("apns", apns, ["aps", "category"]), ("fcm", data, ["category"])] {
            let genuine = try EnvelopeVerificationTests.verify(payload, user: user.id, now: now)
            #expect(genuine.status == 0 && genuine.output == "v1 ok\nv2 ok\n", "\(name): \(genuine.output)")
            let changed = EnvelopeVerificationTests.edited(payload, path, .string("reply.quick"))
            let forged = try EnvelopeVerificationTests.verify(changed, user: user.id, now: now)
            #expect(forged.status == 1 && forged.output.contains("v2 bad signature"), "\(name): \(forged.output)")
        }

        try await harness.workers.waitUntil("request \(requestID) completed") {
            let status = try JSONParser.parse(
                try harness.request("GET", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey).body)
            return status["status"] == .string("completed") && status["sent"] == .number(2)
        }
    }
}
