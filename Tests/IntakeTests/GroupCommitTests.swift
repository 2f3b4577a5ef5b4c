import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The push endpoint's one-statement write (IntakeWriter, sql/functions/intake_push.sql) against its
/// two-round-trip path (more devices than the slots rendered up front), through HTTP.
@Suite("Push group commit", .requiresDatabase)
struct GroupCommitTests {
    let intake = IntakeHarness.shared

    /// The writer's counters from /metrics.
    func writerCounts() throws -> (batches: Int, pushes: Int) {
        let text = try intake.scrapeMetrics().text
        func value(_ name: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
        return (value("herald_intake_push_batches_total"), value("herald_intake_push_batched_total"))
    }

    @Test("an answer built by Postgres is the compact JSON the Swift path writes, with missing identifiers in order")
    func answerBytes() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let optedOut = try intake.makeUser(tenant: partner.tenantID, android: false)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(optedOut.id)/opt-outs/\(partner.miniAppID)").status == 204)
        let wallet = "0x" + String(repeating: "0", count: 39) + "9"
        let body = pushBody(
            partner, emails: ["nobody-b@example.com", user.email, "nobody-a@example.com"],
            wallets: [wallet, optedOut.wallet])
        let before = try writerCounts()
        let response = try intake.push(partner.key, body, idempotencyKey: "bytes-1")
        #expect(response.status == 202)
        // Re-serialising with HeraldCore's writer (members kept in order) gives the same bytes.
        #expect(JSONWriter.bytes(try JSONParser.parse(response.body)) == response.body, "\(response.text)")
        #expect(response.json["status"] == .string("queued"))
        #expect(response.json["recipients"] == .number(2))
        #expect(response.json["deliveries"] == .number(1))
        #expect(response.json["suppressed"] == .number(1))
        #expect(
            response.json["missing"]
                == .object([
                    ("emails", .array([.string("nobody-b@example.com"), .string("nobody-a@example.com")])),
                    ("wallets", .array([.string(wallet)])),
                ]))
        let after = try writerCounts()
        #expect(after.pushes >= before.pushes + 1 && after.batches >= before.batches + 1)
        // The audit row says the same, and the replay is byte for byte the first answer.
        let requestID = try #require(response.json["requestId"]?.stringValue)
        let status = try intake.request("GET", "/api/partners/notifications/push/\(requestID)", token: partner.key)
        #expect(status.json["missing"] == response.json["missing"])
        #expect(status.json["suppressed"] == .number(1))
        let replay = try intake.push(partner.key, body, idempotencyKey: "bytes-1")
        #expect(replay.body == response.body)
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(try DB.count("SELECT count(*) FROM user_senders WHERE mini_app_id = $1", [partner.miniAppID]) == 2)
    }

    @Test("a push whose recipients resolve to no device is completed at once and written, with no delivery")
    func noDevice() throws {
        let partner = try intake.makePartner()
        let response = try intake.push(partner.key, pushBody(partner, emails: ["nobody@example.com"]))
        #expect(response.status == 202)
        #expect(response.json["status"] == .string("completed"))
        #expect(response.json["deliveries"] == .number(0))
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 1)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 0)
    }

    @Test("a scheduled single-device push is due at its sendAt and answers scheduled")
    func scheduled() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, ios: false, android: true)
        let sendAt = ISO8601.format(Date().addingTimeInterval(3600))
        let response = try intake.push(
            partner.key, pushBody(partner, emails: [user.email], extra: #","sendAt":"\#(sendAt)""#))
        #expect(response.status == 202)
        #expect(response.json["status"] == .string("scheduled"))
        let due = try DB.count(
            """
            SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid AND service = 'fcm'
               AND available_at > now() + interval '50 minutes' AND payload LIKE '{"android":%'
            """, [partner.id])
        #expect(due == 1)
    }

    @Test(
        "two devices (the batch's slots) and three (the two-round-trip path): one delivery per device, each payload signed with its own row's id"
    )
    func devicesBeyondTheSlots() throws {
        let partner = try intake.makePartner()
        let two = try intake.makeUser(tenant: partner.tenantID)
        let three = try intake.makeUser(tenant: partner.tenantID, tablet: true)
        for (user, devices) in [(two, ["iphone", "pixel"]), (three, ["ipad", "iphone", "pixel"])] {
            let response = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
            #expect(response.status == 202)
            #expect(response.json["deliveries"] == .number(Double(devices.count)))
            let requestID = try #require(response.json["requestId"]?.stringValue)
            let rows = try DB.rows(
                "SELECT id, device_id, service, payload FROM deliveries WHERE request_id = $1::uuid ORDER BY device_id",
                [requestID])
            #expect(try rows.map { try $0.string(1) } == devices)
            for row in rows {
                let (id, text) = (try row.string(0), try row.string(3))
                let payload = try JSONParser.parse(text)
                let fields = try row.string(2) == "apns" ? payload : payload["data"]
                #expect(fields?["deliveryId"] == .string(id), "\(text)")
            }
        }
        #expect(
            try DB.count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1::uuid AND granularity = 'm'",
                [partner.id]) == 2)
    }

    @Test("parallel single-device pushes through the writer are each written and counted exactly once")
    func batches() throws {
        let intake = self.intake
        let partner = try intake.makePartner(perMinute: 10_000)
        let users = try (0..<8).map { _ in try intake.makeUser(tenant: partner.tenantID, android: false) }
        let before = try writerCounts()
        let responses = runInParallel(24) { index in
            try? intake.push(
                partner.key, pushBody(partner, emails: [users[index % users.count].email]),
                idempotencyKey: "parallel-\(index)")
        }
        #expect(responses.allSatisfy { $0?.status == 202 })
        let after = try writerCounts()
        #expect(after.pushes - before.pushes >= 24)
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 24)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 24)
        #expect(try DB.count("SELECT count(*) FROM idempotency_keys WHERE partner_id = $1::uuid", [partner.id]) == 24)
        #expect(
            try DB.count(
                "SELECT coalesce(sum(count), 0) FROM rate_buckets WHERE partner_id = $1::uuid AND granularity = 'm'",
                [partner.id]) == 24)
    }
}
