import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Rate limits", .requiresDatabase)
struct RateLimitTests {
    let intake = IntakeHarness.shared

    @Test("100 parallel requests against a limit of 60, shared by two intake processes, accept exactly 60")
    func exactAcrossProcesses() throws {
        let first = try IntakeProcess()
        let second = try IntakeProcess()
        defer { first.stop(); second.stop() }
        let partner = try intake.makePartner(perMinute: 60)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email])
        let responses = runInParallel(100) { index in
            let process = index % 2 == 0 ? first : second
            return try? process.request("POST", "/api/partners/notifications/push", token: partner.key, json: body)
        }
        let statuses = responses.map { $0?.status ?? -1 }
        let tally = Dictionary(grouping: statuses, by: { $0 }).mapValues(\.count)
        #expect(statuses.filter { $0 == 202 }.count == 60, "statuses: \(tally)")
        #expect(statuses.filter { $0 == 429 }.count == 40, "statuses: \(tally) (-1: no answer)")
        let limited = try #require(responses.first { $0?.status == 429 } ?? nil)
        #expect(limited.errorCode == "rate_limited")
        let retryAfter = try #require(limited.headers["retry-after"].flatMap(Int.init))
        #expect((1...60).contains(retryAfter))
        // Exactly the admitted requests were written; the refused ones wrote nothing.
        #expect(try DB.count("SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid", [partner.id]) == 60)
        #expect(try DB.count("SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid", [partner.id]) == 60)
    }

    @Test("the day window limits independently of the minute window")
    func dayWindow() throws {
        let partner = try intake.makePartner(perMinute: 100, perDay: 3)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let statuses = try (0..<5).map { _ in
            try intake.push(partner.key, pushBody(partner, emails: [user.email])).status
        }
        #expect(statuses == [202, 202, 202, 429, 429])
        let refused = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(refused.json["error"]?["message"]?.stringValue?.contains("per day") == true)
        // The oldest counted minute leaves the day window in about 24 hours.
        let retryAfter = try #require(refused.headers["retry-after"].flatMap(Int.init))
        #expect(retryAfter > 86_000 && retryAfter <= 86_400)
    }

    @Test("the window slides: requests older than a minute stop counting")
    func sliding() throws {
        let partner = try intake.makePartner(perMinute: 2)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 429)
        // Age the counted seconds, and the minute window's running sum, by 61 s, as if a minute had passed.
        try DB.execute(
            "UPDATE rate_buckets SET bucket = bucket - 61 WHERE partner_id = $1::uuid AND granularity = 's'",
            [partner.id])
        try DB.execute(
            "UPDATE rate_windows SET minute_edge = minute_edge - 61 WHERE partner_id = $1::uuid", [partner.id])
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
    }

    @Test("rejected and replayed requests do not consume the limit")
    func onlyAcceptedCount() throws {
        let partner = try intake.makePartner(perMinute: 2)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        for _ in 0..<5 {
            #expect(try intake.push(partner.key, #"{"recipients":{"emails":[]},"title":"t"}"#).status == 400)
        }
        let body = pushBody(partner, emails: [user.email])
        for _ in 0..<5 { #expect(try intake.push(partner.key, body, idempotencyKey: "same").status == 202) }
        #expect(try intake.push(partner.key, body).status == 202)
        #expect(try intake.push(partner.key, body).status == 429)
    }

    @Test("an admin can raise a partner's limit and it applies at once")
    func tunable() throws {
        let partner = try intake.makePartner(perMinute: 1)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 429)
        let patched = try intake.admin(
            "PATCH", "/api/admin/mini-app-partners/\(partner.id)", #"{"rateLimitPerMinute":5}"#)
        #expect(patched.status == 200)
        #expect(patched.json["rateLimitPerMinute"] == .number(5))
        // The partner profile is cached for at most 2 s per process; a refusal writes nothing.
        try waitFor("the raised limit", timeout: .seconds(5), interval: .milliseconds(200)) {
            try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202
        }
    }

    @Test("rate-limit rejections are counted in /metrics")
    func metrics() throws {
        let partner = try intake.makePartner(perMinute: 1)
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        func limited() throws -> Int {
            let text = try intake.scrapeMetrics().text
            let line = text.split(separator: "\n").first { $0.hasPrefix("herald_intake_rate_limited_total ") }
            return Int(line?.split(separator: " ").last ?? "") ?? -1
        }
        let before = try limited()
        _ = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        _ = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        #expect(try limited() >= before + 1)
    }
}
