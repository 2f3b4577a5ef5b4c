import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

@testable import Simulator

/// Push-to-start tokens per template (ActivityKit gives one per `ActivityAttributes` type): a start goes
/// to its template's token when the host registered one, else to the device's single token; a dead
/// template token leaves the others alone; the host sees each one's health.
@Suite(.requiresDatabase, .serialized)
struct PushToStartTemplateTests {
    /// An iPhone with a single push-to-start token and one of its own for `status`.
    func iPhone(_ harness: LiveActivityHarness, _ partner: LiveActivityHarness.Partner)
        throws -> (user: LiveActivityHarness.User, single: String, status: String)
    {
        let user = try harness.user(iphone: false, pixel: false, sessionWith: [partner.miniApp])
        let single = LiveActivityHarness.hexToken(), status = LiveActivityHarness.hexToken()
        let response = try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(user.id)/devices/iphone",
                """
                {"platform":"ios","environment":"sandbox","apnsPushToStartToken":"\(single)",
                 "apnsPushToStartTokens":{"status":"\(status.uppercased())"},"bundleId":"\(harness.workers.credentials.apnsTopic)"}
                """), [201])
        let tokens = try JSONParser.parse(response.body)["tokens"]
        #expect(tokens?["apnsPushToStart"] == .bool(true))
        #expect(tokens?["apnsPushToStartTemplates"]?.arrayValue?.compactMap(\.stringValue) == ["status"])
        // Tokens are secrets: the answer never carries one.
        #expect(!response.text.lowercased().contains(status) && !response.text.contains(single))
        return (user, single, status)
    }

    static let statusState = #"{"statusLabel":"Order placed","statusVariant":"pending"}"#

    @Test func aStartGoesToItsTemplatesTokenElseToTheSingleOne() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let (user, single, status) = try iPhone(harness, partner)
        try harness.workers.startWorker()

        let statusActivity = try harness.activityID(
            harness.start(partner, user, template: "status", state: Self.statusState))
        try await harness.workers.waitUntil("the status start on the status token") {
            harness.apnsPushes(to: status).count == 1
        }
        let sent = harness.apnsPushes(to: status)[0]
        #expect(sent.status == 200)
        #expect(LiveActivityHarness.aps(sent)?["attributes-type"]?.stringValue == "MiniAppStatusAttributes")
        #expect(LiveActivityHarness.aps(sent)?["attributes"]?["activityId"]?.stringValue == statusActivity)

        // progress has no token of its own: the single one.
        _ = try harness.activityID(harness.start(partner, user, template: "progress"))
        try await harness.workers.waitUntil("the progress start on the single token") {
            harness.apnsPushes(to: single).count == 1
        }
        #expect(
            LiveActivityHarness.aps(harness.apnsPushes(to: single)[0])?["attributes-type"]?.stringValue
                == "MiniAppProgressAttributes")
        #expect(harness.apnsPushes(to: status).count == 1)
    }

    @Test func aDeadTemplateTokenStopsThatTemplateOnlyAndTheHostSeesIt() async throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let (user, single, status) = try iPhone(harness, partner)
        harness.simulator.setFault(SimulatorFault(status: 410, reason: "Unregistered"), token: status)
        try harness.workers.startWorker()

        let first = try harness.activityID(harness.start(partner, user, template: "status", state: Self.statusState))
        try await harness.workers.waitUntil("the start refused and recorded") { try harness.outstanding(first) == 0 }
        #expect(harness.apnsPushes(to: status).map(\.status) == [410])
        #expect(
            harness.apnsPushes(to: single).isEmpty, "a template with its own token never falls back to the single one")

        // The host's view: that template's token invalid with APNs' reason, the single one still valid.
        let device = try JSONParser.parse(harness.host("GET", "/api/internal/users/\(user.id)/devices/iphone").body)
        #expect(device["apnsPushToStart"]?["state"]?.stringValue == "valid")
        #expect(device["apnsPushToStartTemplates"]?["status"]?["state"]?.stringValue == "invalid")
        #expect(device["apnsPushToStartTemplates"]?["status"]?["reason"]?.stringValue == "Unregistered")

        // No iPhone can show a status activity now; progress still starts on the single token.
        let refused = try harness.start(partner, user, template: "status", state: Self.statusState)
        #expect(refused.status == 409)
        #expect((try? JSONParser.parse(refused.body))?["error"]?["code"]?.stringValue == "no_live_device")
        _ = try harness.activityID(harness.start(partner, user, template: "progress"))
        try await harness.workers.waitUntil("the progress start") { harness.apnsPushes(to: single).count == 1 }

        // The host registers a new status token: that template starts again.
        harness.simulator.clearFaults()
        let fresh = LiveActivityHarness.hexToken()
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(user.id)/devices/iphone",
                """
                {"platform":"ios","environment":"sandbox","apnsPushToStartToken":"\(single)",
                 "apnsPushToStartTokens":{"status":"\(fresh)"},"bundleId":"\(harness.workers.credentials.apnsTopic)"}
                """), [200])
        _ = try harness.activityID(harness.start(partner, user, template: "status", state: Self.statusState))
        try await harness.workers.waitUntil("the status start on the new token") {
            harness.apnsPushes(to: fresh).count == 1
        }
    }

    @Test func aTemplateTokenMovesWithThePhoneAndAPutWithoutItRemovesIt() throws {
        let harness = try LiveActivityHarness()
        let partner = try harness.partner()
        let (old, _, status) = try iPhone(harness, partner)
        let other = try harness.user(iphone: false, pixel: false, sessionWith: [partner.miniApp])
        // The phone changed accounts: the template token leaves the old user's device.
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(other.id)/devices/phone",
                """
                {"platform":"ios","environment":"sandbox","apnsPushToStartTokens":{"status":"\(status)"}}
                """), [201])
        let oldDevice = try JSONParser.parse(harness.host("GET", "/api/internal/users/\(old.id)/devices/iphone").body)
        #expect(oldDevice["apnsPushToStartTemplates"]?.objectMembers?.isEmpty == true)
        let newDevice = try JSONParser.parse(harness.host("GET", "/api/internal/users/\(other.id)/devices/phone").body)
        #expect(newDevice["apnsPushToStartTemplates"]?["status"]?["state"]?.stringValue == "valid")
        // A PUT carries all of a device's tokens: one it leaves out is removed.
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(other.id)/devices/phone",
                """
                {"platform":"ios","environment":"sandbox","apnsToken":"\(LiveActivityHarness.hexToken())"}
                """), [200])
        let after = try JSONParser.parse(harness.host("GET", "/api/internal/users/\(other.id)/devices/phone").body)
        #expect(after["apnsPushToStartTemplates"]?.objectMembers?.isEmpty == true)
        #expect(try harness.db.count("SELECT count(*) FROM device_push_to_start_tokens") == 0)
    }

    @Test func theTemplateTokensAreValidatedWithTheFieldNamed() throws {
        let harness = try LiveActivityHarness()
        let user = try harness.user(iphone: false, pixel: false)
        let cases: [(String, String)] = [
            (
                #"{"platform":"ios","environment":"sandbox","apnsPushToStartTokens":{"weather":"\#(LiveActivityHarness.hexToken())"}}"#,
                "apnsPushToStartTokens.weather"
            ),
            (
                #"{"platform":"ios","environment":"sandbox","apnsPushToStartTokens":{"status":"xyz"}}"#,
                "apnsPushToStartTokens.status"
            ),
            (#"{"platform":"ios","environment":"sandbox","apnsPushToStartTokens":["a"]}"#, "apnsPushToStartTokens"),
            (
                #"{"platform":"android","environment":"sandbox","fcmToken":"\#(String(repeating: "f", count: 40))","apnsPushToStartTokens":{}}"#,
                "apnsPushToStartTokens"
            ),
        ]
        for (body, field) in cases {
            let response = try harness.host("PUT", "/api/internal/users/\(user.id)/devices/d1", body)
            #expect(response.status == 400, "\(body): \(response.text)")
            #expect(
                (try? JSONParser.parse(response.body))?["error"]?["field"]?.stringValue == field, "\(response.text)")
        }
        #expect(try harness.db.count("SELECT count(*) FROM devices") == 0)
    }
}
