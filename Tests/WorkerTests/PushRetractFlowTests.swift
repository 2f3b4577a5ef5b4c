import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Simulator
import Testing

/// A partner's retraction through the intake, the outbox and a worker to the simulator: the queued deliveries
/// cancelled, a signed background message to each device the push reached, the counts and the webhook.
@Suite(.requiresDatabase, .serialized)
struct PushRetractFlowTests {
    static func retract(
        _ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner, _ requestID: String
    ) throws -> TestHTTPClient.Response {
        try harness.request("DELETE", "/api/partners/notifications/push/\(requestID)", token: partner.apiKey)
    }

    /// The retract messages the simulator accepted.
    static func retractions(_ harness: LiveActivityHarness) -> [SimulatorRecord] {
        harness.simulator.received().filter { record in
            record.status == 200
                && (record.service == .apns
                    ? record.payload?["event"]?.stringValue == RetractMessage.event
                    : record.payload?["message"]?["data"]?["event"]?.stringValue == RetractMessage.event)
        }
    }

    static func signatureFailure(_ payload: JSONValue?, recipient: String) -> SignedEnvelope.V2Failure?? {
        guard let payload else { return .some(.malformed) }
        let signer = HMACSigner(keyID: "test", key: LiveActivityHarness.signingKey)
        return SignedEnvelope.verifyV2(payload, recipient: recipient, now: Date()) { _, message in
            signer.signature(for: message)
        }
    }

    /// v1: `sig` over every member but `aps`, `kid` and `sig`, as strings (SignedEnvelope.swift).
    static func v1Holds(_ payload: JSONValue?) -> Bool {
        guard let members = payload?.objectMembers, let sig = payload?["sig"]?.stringValue else { return false }
        let fields = members.filter { !["aps", "kid", "sig"].contains($0.key) }.compactMap { member in
            member.value.stringValue.map { (key: member.key, value: $0) }
        }
        let signer = HMACSigner(keyID: "test", key: LiveActivityHarness.signingKey)
        return fields.count == members.count - (payload?["aps"] == nil ? 2 : 3)
            && signer.signature(for: SignedEnvelope.canonicalBytes(fields)) == sig
    }

    @Test("a retract reaches each phone the push reached as a signed background message; queued ones are cancelled")
    func retractSentAndQueued() async throws {
        let harness = try LiveActivityHarness()
        let user = try harness.user()
        let (partner, other) = (try harness.partner(), try harness.partner())
        try WebhookFlow.setWebhook(harness, partner: partner)
        try harness.workers.startWorker()
        let shown = try PushCollapseFlowTests.push(harness, partner, to: user, title: "Wrong price")
        try await harness.workers.waitUntil("the push sent to both phones") {
            try PushCollapseFlowTests.status(harness, partner, shown)["sent"] == .number(2)
        }
        let later = ISO8601.format(Date().addingTimeInterval(3600))
        let queued = try PushCollapseFlowTests.push(
            harness, partner, to: user, title: "Tomorrow", extra: #","sendAt":"\#(later)""#)

        // Another partner's request is an unknown one, and nothing changes.
        #expect(try Self.retract(harness, other, shown).status == 404)
        #expect(try Self.retract(harness, partner, UUID().uuidString.lowercased()).status == 404)
        #expect(try Self.retract(harness, partner, "not-an-id").status == 400)

        let answer = try harness.expect(try Self.retract(harness, partner, shown), [200])
        let status = try JSONParser.parse(answer.body)
        #expect(status["retracted"] == .number(2) && status["cancelled"] == .number(0), "\(status)")
        #expect(status["sent"] == .number(2) && status["status"] == .string("completed"))
        #expect(status["retractedAt"]?.stringValue != nil)

        try await harness.workers.waitUntil("a retract message on both phones") {
            Self.retractions(harness).count == 2
        }
        let sent = PushCollapseFlowTests.received(harness, title: "Wrong price")
        let iphoneSent = try #require(sent.first { $0.service == .apns })
        let pixelSent = try #require(sent.first { $0.service == .fcm })
        let iphone = try #require(Self.retractions(harness).first { $0.service == .apns })
        #expect(iphone.apnsPushType == "background" && iphone.apnsPriority == "5")
        #expect(iphone.apnsCollapseID == nil)
        #expect(iphone.aps == .object([("content-available", .number(1))]))
        #expect(iphone.payload?["deliveryId"] == iphoneSent.payload?["deliveryId"])
        #expect(iphone.payload?["miniAppId"] == .string(partner.miniApp))
        #expect(Self.signatureFailure(iphone.payload, recipient: user.id) == .some(nil))
        #expect(Self.signatureFailure(iphone.payload, recipient: "someone-else") == .some(.badSignature))
        #expect(Self.v1Holds(iphone.payload))
        let pixel = try #require(Self.retractions(harness).first { $0.service == .fcm })
        let data = pixel.payload?["message"]?["data"]
        #expect(pixel.payload?["message"]?["android"]?["priority"] == .string("NORMAL"))
        #expect(data?["deliveryId"] == pixelSent.payload?["message"]?["data"]?["deliveryId"])
        #expect(data?["title"] == nil)
        #expect(Self.signatureFailure(data, recipient: user.id) == .some(nil))
        #expect(Self.v1Holds(data))

        // The queued push: cancelled at once, never sent, nothing to take back.
        let cancelled = try JSONParser.parse(try harness.expect(try Self.retract(harness, partner, queued), [200]).body)
        #expect(cancelled["cancelled"] == .number(2) && cancelled["retracted"] == .number(0), "\(cancelled)")
        #expect(cancelled["status"] == .string("completed") && cancelled["pending"] == .number(0))
        #expect(try harness.db.count("SELECT count(*) FROM deliveries WHERE request_id = $1::uuid", [queued]) == 0)
        #expect(
            try harness.db.count(
                "SELECT count(*) FROM delivery_history WHERE request_id = $1::uuid AND outcome = 'cancelled'",
                [queued]) == 2)

        // Again: the same answer, nothing new written or sent.
        let again = try JSONParser.parse(try harness.expect(try Self.retract(harness, partner, shown), [200]).body)
        #expect(again["retracted"] == .number(2) && again["retractedAt"] == status["retractedAt"])
        try await harness.workers.waitUntil("the messages recorded") {
            try harness.db.count("SELECT count(*) FROM deliveries") == 0
        }
        #expect(Self.retractions(harness).count == 2)
        #expect(PushCollapseFlowTests.received(harness, title: "Tomorrow").isEmpty)

        // The webhook: push.retracted for each, and push.completed for the one the retraction finished.
        let events = try WebhookFlow.bodies(harness, subject: queued)
        let retracted = try #require(events.first { $0["type"] == .string("push.retracted") })
        #expect(retracted["cancelled"] == .number(2) && retracted["retracted"] == .number(0), "\(retracted)")
        #expect(retracted["retractedAt"]?.stringValue != nil && retracted["completedAt"] == nil)
        let completed = try #require(events.first { $0["type"] == .string("push.completed") })
        #expect(completed["cancelled"] == .number(2) && completed["sent"] == .number(0), "\(completed)")
        let shownEvents = try WebhookFlow.bodies(harness, subject: shown)
        #expect(shownEvents.filter { $0["type"] == .string("push.retracted") }.count == 1)
    }
}

/// A partner's webhook set in the database, and the events queued for it.
enum WebhookFlow {
    static func setWebhook(_ harness: LiveActivityHarness, partner: LiveActivityHarness.Partner) throws {
        // Nothing listens there: the events stay queued, where the test reads them.
        _ = try harness.db.connection.query(
            "UPDATE partners SET webhook_url = 'https://127.0.0.1:9/hook', webhook_secret = 'test-secret' "
                + "WHERE id = $1::uuid", [partner.id])
    }

    static func bodies(_ harness: LiveActivityHarness, subject: String) throws -> [JSONValue] {
        try harness.db.connection.query(
            "SELECT body FROM webhook_events WHERE subject_id = $1::uuid ORDER BY created_at", [subject]
        ).rows.map { try JSONParser.parse($0.string(0)) }
    }
}
