import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import ServiceSupport
import Testing

/// Credentials rotated with an overlap (docs/runbooks/credentials.md, *Key and credential rotation*): a partner key's
/// `previousKeyValidSeconds` and `DELETE .../previous-key`, and the previous admin and host tokens; every request
/// made with a previous credential is counted in `/metrics`.
@Suite("Credential rotation with an overlap", .serialized, .requiresDatabase)
struct CredentialRotationTests {
    static let previousAdmin = "previous-admin-token-0123456789"
    static let previousHost = "previous-host-token-0123456789"

    /// No key cache, so an overlap's end is seen by the very next request.
    static let intake: IntakeHarness = {
        do {
            return try IntakeHarness {
                $0.partnerCacheSeconds = 0
                $0.adminTokenPrevious = previousAdmin
                $0.hostTokenPrevious = previousHost
            }
        } catch { fatalError("cannot start the test intake: \(error)") }
    }()

    var intake: IntakeHarness { Self.intake }

    func metrics() throws -> String { try intake.scrapeMetrics().text }

    func rotate(_ partner: TestPartner, _ body: String?) throws -> TestHTTPClient.Response {
        try intake.admin("POST", "/api/admin/mini-app-partners/\(partner.id)/rotate-key", body)
    }

    @Test("A key rotated with an overlap: the old and the new key both work until it ends, then only the new one")
    func overlap() async throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email])
        let before = Date()
        let rotated = try rotate(partner, #"{"previousKeyValidSeconds":3}"#)
        #expect(rotated.status == 200)
        let newKey = try #require(rotated.json["apiKey"]?.stringValue)
        let expires = try #require(rotated.json["previousKeyExpiresAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(expires.timeIntervalSince(before) > 2 && expires.timeIntervalSince(before) < 4, "\(expires)")

        #expect(try intake.push(partner.key, body).status == 202)
        #expect(try intake.push(newKey, body).status == 202)
        #expect(
            try metrics().contains(
                #"herald_intake_previous_credential_requests_total{credential="partner_key",partner="\#(partner.miniAppID)"} 1"#
            ))

        // The list shows the overlap while it lasts.
        let listed = try intake.admin("GET", "/api/admin/mini-app-partners").json["partners"]?.arrayValue?
            .first { $0["id"]?.stringValue == partner.id }
        #expect(listed?["previousKeyExpiresAt"] == rotated.json["previousKeyExpiresAt"])

        // The old key works until the overlap ends (each push meanwhile is accepted), then is refused.
        #expect(
            try await eventually(timeout: .seconds(10), interval: .milliseconds(200)) {
                try intake.push(partner.key, body).status == 401
            })
        #expect(Date() >= expires.addingTimeInterval(-0.5), "refused before the overlap ended")
        #expect(try intake.push(newKey, body).status == 202)
        let after = try intake.admin("GET", "/api/admin/mini-app-partners").json["partners"]?.arrayValue?
            .first { $0["id"]?.stringValue == partner.id }
        #expect(after?["previousKeyExpiresAt"] == .null)
    }

    @Test(
        "Rotating again keeps only the key just replaced; DELETE previous-key ends it at once; no overlap ends it too")
    func secondRotationAndEnd() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email])
        let first = try #require(try rotate(partner, #"{"previousKeyValidSeconds":3600}"#).json["apiKey"]?.stringValue)
        let second = try #require(try rotate(partner, #"{"previousKeyValidSeconds":3600}"#).json["apiKey"]?.stringValue)
        #expect(try intake.push(partner.key, body).status == 401)
        #expect(try intake.push(first, body).status == 202)
        #expect(try intake.push(second, body).status == 202)

        let ended = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)/previous-key")
        #expect(ended.status == 200)
        #expect(ended.json["previousKeyExpiresAt"] == .null)
        #expect(ended.json["apiKey"] == nil)
        #expect(try intake.push(first, body).status == 401)
        #expect(try intake.push(second, body).status == 202)

        // Without a body, or with 0, the old key is refused at once, as before overlaps existed.
        let third = try #require(try rotate(partner, #"{"previousKeyValidSeconds":60}"#).json["apiKey"]?.stringValue)
        let fourth = try rotate(partner, #"{"previousKeyValidSeconds":0}"#)
        #expect(fourth.json["previousKeyExpiresAt"] == .null)
        let fourthKey = try #require(fourth.json["apiKey"]?.stringValue)
        #expect(try intake.push(second, body).status == 401)
        #expect(try intake.push(third, body).status == 401)
        let fifth = try #require(try rotate(partner, nil).json["apiKey"]?.stringValue)
        #expect(try intake.push(fourthKey, body).status == 401)
        #expect(try intake.push(fifth, body).status == 202)

        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(UUID())/previous-key").status == 404)
        #expect(try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)").status == 200)
        let revoked = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)/previous-key")
        #expect(revoked.status == 409)
        #expect(revoked.json["error"]?["code"] == .string("partner_revoked"))
    }

    @Test("A revoked partner's previous key is refused with its current one")
    func revokedDuringOverlap() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let body = pushBody(partner, emails: [user.email])
        let rotated = try rotate(partner, #"{"previousKeyValidSeconds":3600}"#)
        let newKey = try #require(rotated.json["apiKey"]?.stringValue)
        #expect(try intake.push(partner.key, body).status == 202)
        let revoked = try intake.admin("DELETE", "/api/admin/mini-app-partners/\(partner.id)")
        #expect(revoked.json["previousKeyExpiresAt"] == .null)
        #expect(try intake.push(partner.key, body).status == 401)
        #expect(try intake.push(newKey, body).status == 401)
    }

    @Test("A bad overlap is 400 naming the field, and the key is not rotated")
    func badOverlaps() throws {
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID, android: false)
        let bad: [(body: String, field: String?)] = [
            (#"{"previousKeyValidSeconds":-1}"#, "previousKeyValidSeconds"),
            (#"{"previousKeyValidSeconds":604801}"#, "previousKeyValidSeconds"),
            (#"{"previousKeyValidSeconds":1.5}"#, "previousKeyValidSeconds"),
            (#"{"previousKeyValidSeconds":"60"}"#, "previousKeyValidSeconds"),
            (#"{"previousKeyValid":60}"#, "previousKeyValid"),
            ("[60]", nil),
            ("{", nil),
        ]
        for (body, field) in bad {
            let answer = try rotate(partner, body)
            #expect(answer.status == 400, "\(body)")
            if let field { #expect(answer.json["error"]?["field"] == .string(field), "\(body): \(answer.text)") }
            #expect(answer.json["apiKey"] == nil)
        }
        #expect(try intake.push(partner.key, pushBody(partner, emails: [user.email])).status == 202)
        #expect(try rotate(partner, #"{"previousKeyValidSeconds":604800}"#).status == 200)
    }

    @Test("The previous admin and host tokens are accepted beside the current ones, and counted")
    func previousTokens() throws {
        let adminBefore = try Self.count(try metrics(), credential: "admin_token")
        let hostBefore = try Self.count(try metrics(), credential: "host_token")
        let list = "/api/admin/mini-app-partners"
        #expect(try intake.request("GET", list, token: IntakeHarness.adminToken).status == 200)
        #expect(try intake.request("GET", list, token: Self.previousAdmin).status == 200)
        #expect(try intake.request("GET", list, token: Self.previousHost).status == 401)
        #expect(try intake.request("GET", list, token: "previous-admin-token-012345678").status == 401)
        let user = TestEnvironment.unique("rotation-user")
        let path = "/api/internal/users/\(user)"
        #expect(
            try intake.request("PUT", path, token: Self.previousHost, json: #"{"tenantId":"t1","emails":[]}"#).status
                == 201)
        #expect(try intake.request("GET", path + "/devices", token: IntakeHarness.hostToken).status == 200)
        #expect(try intake.request("GET", path + "/devices", token: Self.previousAdmin).status == 401)
        let text = try metrics()
        #expect(try Self.count(text, credential: "admin_token") == adminBefore + 1, "\(text)")
        #expect(try Self.count(text, credential: "host_token") == hostBefore + 1, "\(text)")
    }

    static func count(_ metrics: String, credential: String) throws -> Int {
        let prefix = #"herald_intake_previous_credential_requests_total{credential="\#(credential)"} "#
        return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
            ?? 0
    }

    @Test(
        "HERALD_ADMIN_TOKEN_PREVIOUS and HERALD_HOST_TOKEN_PREVIOUS: optional, 16 characters or more, unlike any other token"
    )
    func configuration() throws {
        let base = IntakeConfigurationTests.base
        func read(_ extra: [String: String]) throws(ConfigurationError) -> IntakeConfiguration {
            try IntakeConfiguration.fromEnvironment(base.merging(extra) { $1 })
        }
        let none = try read([:])
        #expect(none.adminTokenPrevious == nil && none.hostTokenPrevious == nil)
        let both = try read([
            "HERALD_ADMIN_TOKEN_PREVIOUS": Self.previousAdmin, "HERALD_HOST_TOKEN_PREVIOUS": Self.previousHost,
        ])
        #expect(both.adminTokenPrevious == Self.previousAdmin && both.hostTokenPrevious == Self.previousHost)
        let admin = base["HERALD_ADMIN_TOKEN"]!, host = base["HERALD_HOST_TOKEN"]!
        let refused: [([String: String], String)] = [
            (["HERALD_ADMIN_TOKEN_PREVIOUS": "short"], "HERALD_ADMIN_TOKEN_PREVIOUS"),
            (["HERALD_HOST_TOKEN_PREVIOUS": "short"], "HERALD_HOST_TOKEN_PREVIOUS"),
            (["HERALD_ADMIN_TOKEN_PREVIOUS": admin], "HERALD_ADMIN_TOKEN_PREVIOUS"),
            (["HERALD_ADMIN_TOKEN_PREVIOUS": host], "HERALD_HOST_TOKEN"),
            (["HERALD_HOST_TOKEN_PREVIOUS": admin], "HERALD_HOST_TOKEN_PREVIOUS"),
            (["HERALD_HOST_TOKEN_PREVIOUS": host], "HERALD_HOST_TOKEN_PREVIOUS"),
            (
                ["HERALD_ADMIN_TOKEN_PREVIOUS": Self.previousAdmin, "HERALD_HOST_TOKEN_PREVIOUS": Self.previousAdmin],
                "HERALD_HOST_TOKEN_PREVIOUS"
            ),
        ]
        for (extra, variable) in refused {
            #expect(throws: ConfigurationError.self, "\(extra)") { try read(extra) }
            do { _ = try read(extra) } catch { #expect(error.variable == variable, "\(extra): \(error)") }
        }
    }
}
