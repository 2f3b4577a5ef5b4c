import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Idempotency-Key", .requiresDatabase)
struct IdempotencyTests {
    let intake = IntakeHarness.shared

    @Test("a retry with the same key and body replays the original response and sends nothing")
    func replay() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let body = pushBody(partner, emails: [user.email])
        let first = try intake.push(partner.key, body, idempotencyKey: "order-42")
        let second = try intake.push(partner.key, body, idempotencyKey: "order-42")
        #expect(first.status == 202)
        #expect(second.status == 202)
        #expect(second.body == first.body)
        #expect(second.headers["idempotent-replayed"] == "true")
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 1)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 2)
    }

    @Test("the same key with a different body is 422 idempotency_key_reused")
    func reusedKey() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        #expect(
            try intake.push(partner.key, pushBody(partner, emails: [user.email]), idempotencyKey: "k").status == 202)
        let other = try intake.push(
            partner.key, pushBody(partner, emails: [user.email], title: "Other"), idempotencyKey: "k")
        #expect(other.status == 422)
        #expect(other.errorCode == "idempotency_key_reused")
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 1)
    }

    @Test("keys are per partner: another partner's identical key is a new request")
    func perPartner() throws {
        let first = try intake.makePartner()
        let second = try intake.makePartner(tenant: first.tenantID)
        let user = try intake.makeUser(tenant: first.tenantID)
        #expect(try intake.push(first.key, pushBody(first, emails: [user.email]), idempotencyKey: "same").status == 202)
        let other = try intake.push(second.key, pushBody(second, emails: [user.email]), idempotencyKey: "same")
        #expect(other.status == 202)
        #expect(other.headers["idempotent-replayed"] == nil)
    }

    @Test("20 concurrent requests with one key enqueue exactly once and all get the same answer")
    func concurrentSameKey() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let body = pushBody(partner, emails: [user.email])
        let intake = self.intake
        let responses = runInParallel(20) { _ in try? intake.push(partner.key, body, idempotencyKey: "burst-1") }
        #expect(responses.allSatisfy { $0?.status == 202 })
        let bodies = Set(responses.compactMap { $0?.text })
        #expect(bodies.count == 1)
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 1)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 2)
        // Only the request that enqueued counts against the rate limit.
        #expect(
            try DB.count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1::uuid AND granularity = 's'",
                [partner.id]) == 1)
    }

    @Test("a retry replays even when its body would no longer validate (sendAt now in the past)")
    func replayBeforeValidation() throws {
        let clock = TestClock(Date())
        let intake = try IntakeHarness(clock: { clock.now })
        defer { intake.stop() }
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let sendAt = ISO8601.format(clock.now.addingTimeInterval(600))
        let body = pushBody(partner, emails: [user.email], extra: #","sendAt":"\#(sendAt)""#)
        let first = try intake.push(partner.key, body, idempotencyKey: "remind-me")
        #expect(first.status == 202)
        #expect(first.json["status"] == .string("scheduled"))
        clock.advance(by: 7200)
        let fresh = try intake.push(partner.key, body, idempotencyKey: "another-key")
        #expect(fresh.errorCode == "send_at_out_of_range")
        let retry = try intake.push(partner.key, body, idempotencyKey: "remind-me")
        #expect(retry.status == 202)
        #expect(retry.body == first.body)
    }

    @Test("a malformed Idempotency-Key is refused")
    func malformedKey() throws {
        let partner = try intake.makePartner()
        let response = try intake.push(
            partner.key, pushBody(partner, emails: ["a@example.com"]),
            idempotencyKey: String(repeating: "k", count: 256))
        #expect(response.status == 400)
        #expect(response.errorField == "Idempotency-Key")
        #expect(try DB.writes(partnerID: partner.id) == 0)
    }

    @Test("a key older than 24 hours no longer replays")
    func expiry() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        let body = pushBody(partner, emails: [user.email])
        let first = try intake.push(partner.key, body, idempotencyKey: "daily")
        try DB.execute(
            "UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE partner_id = $1::uuid",
            [partner.id])
        let second = try intake.push(partner.key, body, idempotencyKey: "daily")
        #expect(second.status == 202)
        #expect(second.json["requestId"] != first.json["requestId"])
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 2)
    }
}
