import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import Testing

/// A partner cannot use Live Activity starts to ask who is a user faster than its rate limit: a refusal that
/// follows the directory lookup spends the slot like an accepted start, and a user of another tenant is refused
/// exactly as an identifier of nobody.
@Suite("No membership oracle", .serialized, .requiresDatabase)
struct MembershipOracleTests {
    var intake: IntakeHarness { IntakeHarness.shared }

    static func startBody(email: String) -> String {
        #"{"recipient":{"email":"\#(email)"},"template":"progress","#
            + #""attributes":{"title":"Deposit confirmation","subtitle":"0x001...a3c31"},"#
            + #""state":{"stages":["Confirming","Processing","Completed"],"currentStage":0,"progress":0.16,"#
            + #""statusText":"Confirmations: 1/6"}}"#
    }

    func start(_ partner: TestPartner, email: String, path: String = "/api/partners/live-activities") throws
        -> TestHTTPClient.Response
    {
        try intake.request("POST", path, token: partner.key, json: Self.startBody(email: email))
    }

    static func spent(_ partner: TestPartner) throws -> Int {
        try DB.count(
            """
            SELECT coalesce(sum(count), 0)::int FROM rate_buckets WHERE partner_id = $1::uuid AND granularity = 'm'
            """, [partner.id])
    }

    @Test("100 starts for unknown emails meet 429 after the partner's 10 a minute")
    func unknownEmailsSpendTheRateLimit() throws {
        let partner = try intake.makePartner(perMinute: 10)
        var statuses: [Int] = []
        for index in 0..<100 {
            let response = try start(partner, email: "nobody-\(index)-\(UUID().uuidString.prefix(8))@example.com")
            if statuses.count < 10 { #expect(response.errorCode == "recipient_not_found", "\(response.text)") }
            if response.status == 429 { #expect(response.headers["retry-after"] != nil) }
            statuses.append(response.status)
        }
        #expect(statuses.prefix(10).allSatisfy { $0 == 404 }, "\(statuses)")
        #expect(statuses.dropFirst(10).allSatisfy { $0 == 429 }, "\(statuses)")
        #expect(try Self.spent(partner) == 10)
        // A request refused before the lookup (bad input) still gives its slot back.
        let other = try intake.makePartner(perMinute: 10)
        let invalid = try intake.request("POST", "/api/partners/live-activities", token: other.key, json: "{}")
        #expect(invalid.status == 400)
        #expect(try Self.spent(other) == 0)
    }

    @Test("no_session, opted_out and no_live_device spend the slot too")
    func everyRefusalAfterTheLookupSpends() throws {
        let partner = try intake.makePartner()
        let noSession = try intake.makeUser(tenant: partner.tenantID)
        #expect(try start(partner, email: noSession.email).errorCode == "no_session")
        let optedOut = try intake.makeUser(tenant: partner.tenantID)
        for path in ["mini-app-sessions", "opt-outs"] {
            #expect(
                try intake.host("PUT", "/api/internal/users/\(optedOut.id)/\(path)/\(partner.miniAppID)").status
                    < 300)
        }
        #expect(try start(partner, email: optedOut.email).errorCode == "opted_out")
        let deviceless = try intake.makeUser(tenant: partner.tenantID, ios: false, android: false)
        #expect(
            try intake.host("PUT", "/api/internal/users/\(deviceless.id)/mini-app-sessions/\(partner.miniAppID)")
                .status < 300)
        #expect(try start(partner, email: deviceless.email).errorCode == "no_live_device")
        #expect(try Self.spent(partner) == 3)
    }

    @Test("a user of another tenant is answered exactly as an email of nobody, on a start and a channel's start")
    func anotherTenantsUserIsNobody() throws {
        let partner = try intake.makePartner()
        let stranger = try intake.makeUser(tenant: TestEnvironment.unique("other-tenant"))
        try intake.host("PUT", "/api/internal/users/\(stranger.id)/mini-app-sessions/\(partner.miniAppID)")
            .expectSuccess()
        let nobody = "nobody-\(UUID().uuidString.prefix(8))@example.com"

        // A broadcast channel APNs has made (its worker's part written by hand).
        let opened = try intake.request(
            "POST", "/api/partners/live-activities/channels", token: partner.key,
            json: """
                {"template":"countdown","attributes":{"title":"Drop 17","subtitle":"Sneakers"},
                 "state":{"deadline":"2030-01-01T10:00:00Z","footnote":"Opens soon"},"ttlSeconds":3600}
                """)
        let channelID = try #require(opened.json["channelId"]?.stringValue, "\(opened.text)")
        try DB.execute(
            "UPDATE live_channels SET status = 'open', apns_channel_id = 'dGVzdA==' WHERE id = $1::uuid",
            [channelID])
        let before = try Self.spent(partner)
        for path in ["/api/partners/live-activities", "/api/partners/live-activities/channels/\(channelID)/starts"] {
            let body = path.hasSuffix("/starts") ? #"{"recipient":{"email":"EMAIL"}}"# : Self.startBody(email: "EMAIL")
            let answers = try [stranger.email, nobody].map { email in
                try intake.request(
                    "POST", path, token: partner.key,
                    json: body.replacingOccurrences(of: "EMAIL", with: email))
            }
            #expect(answers[0].status == 404 && answers[0].errorCode == "recipient_not_found", "\(answers[0].text)")
            #expect(answers[0].status == answers[1].status && answers[0].body == answers[1].body, "\(path)")
            #expect(answers[0].headers.filter { $0.key != "date" } == answers[1].headers.filter { $0.key != "date" })
        }
        #expect(try Self.spent(partner) == before + 4)
    }
}

extension TestHTTPClient.Response {
    func expectSuccess(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(status < 300, "\(status) \(text)", sourceLocation: sourceLocation)
    }
}
