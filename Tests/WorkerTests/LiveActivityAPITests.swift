import Foundation
import HeraldCore
import HeraldTestSupport
import Intake
import ServiceSupport
import Testing

/// Every refusal of the Live Activity endpoints, tenant isolation, idempotency and rate limits: each
/// refusal writes nothing.
@Suite(.requiresDatabase, .serialized)
struct LiveActivityAPITests {
    let harness: LiveActivityHarness

    init() throws { harness = try LiveActivityHarness() }

    func code(_ response: TestHTTPClient.Response) -> String? {
        (try? JSONParser.parse(response.body))?["error"]?["code"]?.stringValue
    }

    func field(_ response: TestHTTPClient.Response) -> String? {
        (try? JSONParser.parse(response.body))?["error"]?["field"]?.stringValue
    }

    func activityRows() throws -> Int { try harness.db.count("SELECT count(*) FROM live_activities") }

    @Test func startsAreRefusedWithTheRightCodeAndWriteNothing() throws {
        let partner = try harness.partner()
        let noSession = try harness.user()
        let stranger = LiveActivityHarness.User(
            id: "nobody", email: "nobody@example.com", pushToStartToken: nil, fcmToken: nil)
        let noDevice = try harness.user(iphone: false, pixel: false, sessionWith: [partner.miniApp])
        let optedOut = try harness.user(sessionWith: [partner.miniApp])
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(optedOut.id)/opt-outs/\(partner.miniApp)"), [200, 201, 204])
        let cases: [(LiveActivityHarness.User, Int, String)] = [
            (noSession, 409, "no_session"), (stranger, 404, "recipient_not_found"), (noDevice, 409, "no_live_device"),
            (optedOut, 409, "opted_out"),
        ]
        for (user, status, expected) in cases {
            let response = try harness.start(partner, user)
            #expect(response.status == status, "\(expected): \(response.text)")
            #expect(code(response) == expected)
            #expect(field(response) == "recipient")
        }
        // An old session does not count (HERALD_SESSION_WINDOW_DAYS, 30 days by default).
        let stale = try harness.user(sessionWith: [partner.miniApp])
        try harness.db.connection.query(
            "UPDATE mini_app_sessions SET last_seen_at = now() - interval '31 days' WHERE user_id = $1", [stale.id])
        #expect(code(try harness.start(partner, stale)) == "no_session")
        // An iPhone without a push-to-start token cannot show a remotely started activity.
        let alertOnly = try harness.user(iphone: false, pixel: false, sessionWith: [partner.miniApp])
        try harness.expect(
            harness.host(
                "PUT", "/api/internal/users/\(alertOnly.id)/devices/old-iphone",
                """
                {"platform":"ios","environment":"sandbox","apnsToken":"\(LiveActivityHarness.hexToken())"}
                """), [200, 201])
        #expect(code(try harness.start(partner, alertOnly)) == "no_live_device")
        #expect(try activityRows() == 0)
        #expect(try harness.db.count("SELECT count(*) FROM deliveries") == 0)
    }

    @Test func bodiesAreValidatedFieldByField() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let cases: [(String?, String?, String?, Int?, Int, String, String)] = [
            // (template, attributes, state, ttl, status, code, field)
            ("gauge", nil, nil, nil, 422, "unknown_template", "template"),
            (nil, nil, #"{"stages":[],"currentStage":0,"progress":0}"#, nil, 422, "invalid_state", "state.stages"),
            (
                nil, nil, #"{"stages":["a"],"currentStage":1,"progress":0}"#, nil, 422, "invalid_state",
                "state.currentStage"
            ),
            (
                nil, nil, #"{"stages":["a"],"currentStage":0,"progress":1.5}"#, nil, 422, "invalid_state",
                "state.progress"
            ),
            (
                nil, nil, #"{"stages":["a"],"currentStage":"0","progress":0}"#, nil, 400, "invalid_field",
                "state.currentStage"
            ),
            (
                "status", nil, #"{"statusLabel":"x","statusVariant":"great"}"#, nil, 422, "invalid_state",
                "state.statusVariant"
            ),
            ("countdown", nil, #"{"deadline":"tomorrow"}"#, nil, 422, "invalid_state", "state.deadline"),
            (nil, #"{"subtitle":"no title"}"#, nil, nil, 400, "missing_field", "attributes.title"),
            (nil, nil, nil, 28_801, 400, "invalid_field", "ttlSeconds"),
            (nil, nil, nil, 0, 400, "invalid_field", "ttlSeconds"),
        ]
        for (template, attributes, state, ttl, status, expected, expectedField) in cases {
            let response = try harness.start(
                partner, user, template: template ?? "progress", attributes: attributes,
                state: state, ttlSeconds: ttl)
            #expect(response.status == status, "\(expected) \(expectedField): \(response.text)")
            #expect(code(response) == expected, "\(response.text)")
            #expect(field(response) == expectedField, "\(response.text)")
        }
        let unknown = try harness.request(
            "POST", "/api/partners/live-activities", token: partner.apiKey,
            json: #"{"recipient":{"email":"\#(user.email)"},"template":"progress","colour":"red"}"#)
        #expect(unknown.status == 400 && code(unknown) == "unknown_field")
        let both = try harness.request(
            "POST", "/api/partners/live-activities", token: partner.apiKey,
            json: """
                {"recipient":{"email":"\(user.email)","wallet":"0x\(String(repeating: "a", count: 40))"},"template":"progress",
                 "attributes":{"title":"t"},"state":\(LiveActivityHarness.progressState)}
                """)
        #expect(both.status == 400 && field(both) == "recipient")
        let notJSON = try harness.request("POST", "/api/partners/live-activities", token: partner.apiKey, json: "{")
        #expect(notJSON.status == 400 && code(notJSON) == "invalid_json")
        #expect(try activityRows() == 0)
    }

    @Test func changesOfEndedUnknownAndForeignActivitiesAreRefused() async throws {
        let partner = try harness.partner()
        let other = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))

        // Another partner's id reads as 404 on every endpoint, and changes nothing.
        for response in [
            try harness.get(other, id), try harness.update(other, id, #"{"state":{"progress":0.3}}"#),
            try harness.end(other, id),
        ] {
            #expect(response.status == 404 && code(response) == "not_found", "\(response.text)")
        }
        let unknown = UUID().uuidString.lowercased()
        #expect(try harness.get(partner, unknown).status == 404)
        #expect(try harness.update(partner, "not-a-uuid", #"{"state":{}}"#).status == 400)

        // A merged state is validated again: stages shrink under the current stage.
        let shrink = try harness.update(partner, id, #"{"state":{"currentStage":2}}"#)
        #expect(shrink.status == 200)
        let invalid = try harness.update(partner, id, #"{"state":{"stages":["only"]}}"#)
        #expect(invalid.status == 422 && code(invalid) == "invalid_state" && field(invalid) == "state.currentStage")
        // ttlSeconds may extend the activity up to 8 hours from its start, not beyond.
        #expect(try harness.update(partner, id, #"{"ttlSeconds":28000}"#).status == 200)
        let tooLong = try harness.update(partner, id, #"{"ttlSeconds":28800}"#)
        #expect(tooLong.status == 422 && code(tooLong) == "ttl_beyond_limit" && field(tooLong) == "ttlSeconds")
        let farDismissal = try harness.end(
            partner, id, #"{"dismissAt":"\#(ISO8601.format(Date().addingTimeInterval(5 * 3600)))"}"#)
        #expect(farDismissal.status == 422 && code(farDismissal) == "dismiss_at_out_of_range")

        try harness.expect(harness.end(partner, id), [200])
        for response in [try harness.update(partner, id, #"{"state":{"progress":0.3}}"#), try harness.end(partner, id)]
        {
            #expect(response.status == 409 && code(response) == "activity_ended", "\(response.text)")
        }
        #expect((try JSONParser.parse(try harness.get(partner, id).body))["state"]?["currentStage"]?.numberValue == 2)
    }

    @Test func partnersOfAnotherTenantCannotReachTheUser() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let response = try harness.request(
            "POST", "/api/admin/mini-app-partners", token: LiveActivityHarness.adminToken,
            json: #"{"miniAppId":"other.tenant.app","displayName":"Other","tenantId":"t2"}"#)
        let key = try #require((try? JSONParser.parse(response.body))?["apiKey"]?.stringValue)
        try harness.expect(
            harness.host("PUT", "/api/internal/users/\(user.id)/mini-app-sessions/other.tenant.app"), [200, 201, 204])
        let foreign = LiveActivityHarness.Partner(
            id: "", miniApp: "other.tenant.app", apiKey: key, displayName: "Other")
        let refused = try harness.start(foreign, user)
        #expect(refused.status == 404 && code(refused) == "recipient_not_found")
        #expect(try activityRows() == 0)
    }

    @Test func idempotencyKeysReplayStartsUpdatesAndEnds() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let first = try harness.start(partner, user, idempotencyKey: "start-1")
        let again = try harness.start(partner, user, idempotencyKey: "start-1")
        #expect(again.status == 201 && again.text == first.text)
        #expect(again.headers["idempotent-replayed"] == "true")
        let id = try harness.activityID(first)
        #expect(try activityRows() == 1)
        let changed = try harness.start(partner, user, ttlSeconds: 60, idempotencyKey: "start-1")
        #expect(changed.status == 422 && code(changed) == "idempotency_key_reused")

        let update = try harness.update(partner, id, #"{"state":{"progress":0.7}}"#, idempotencyKey: "update-1")
        let replay = try harness.update(partner, id, #"{"state":{"progress":0.7}}"#, idempotencyKey: "update-1")
        #expect(update.status == 200 && replay.status == 200 && replay.text == update.text)
        #expect(try harness.db.count("SELECT version FROM live_activities WHERE id = $1::uuid", [id]) == 2)
        // The same key on another endpoint is a reuse, not a replay.
        let elsewhere = try harness.update(
            partner, id, #"{"state":{"progress":0.7}}"#, method: "PATCH", idempotencyKey: "update-1")
        #expect(elsewhere.status == 422 && code(elsewhere) == "idempotency_key_reused")
    }

    @Test func startsUpdatesAndEndsSpendThePartnersRateLimit() throws {
        let partner = try harness.partner(perMinute: 3)
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        try harness.expect(harness.update(partner, id, #"{"state":{"progress":0.2}}"#), [200])
        // A refusal gives its slot back: it does not count.
        #expect(try harness.update(partner, id, #"{"state":{"progress":2}}"#).status == 422)
        try harness.expect(harness.end(partner, id), [200])
        let limited = try harness.start(partner, user)
        #expect(limited.status == 429 && code(limited) == "rate_limited")
        #expect(limited.headers["retry-after"] != nil)
    }

    @Test func hostTokensAreValidatedAndOnlyForIPhonesTheActivityStartedOn() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        let id = try harness.activityID(harness.start(partner, user))
        #expect(code(try harness.putToken(id, device: "pixel", LiveActivityHarness.hexToken())) == "not_ios_device")
        #expect(try harness.putToken(id, device: "ipad", LiveActivityHarness.hexToken()).status == 404)
        #expect(try harness.putToken(UUID().uuidString.lowercased(), LiveActivityHarness.hexToken()).status == 404)
        let bad = try harness.putToken(id, "not-hex")
        #expect(bad.status == 400 && field(bad) == "token")
        let partnerKey = try harness.request(
            "PUT", "/api/internal/live-activities/\(id)/push-tokens/iphone",
            token: partner.apiKey, json: #"{"token":"\#(LiveActivityHarness.hexToken())"}"#)
        #expect(partnerKey.status == 401)
        #expect(try harness.db.count("SELECT count(*) FROM live_activity_targets WHERE update_token IS NOT NULL") == 0)
    }

    @Test func aRenderedPayloadOverTheLimitIsRefusedAtIntake() throws {
        let partner = try harness.partner()
        let user = try harness.user(sessionWith: [partner.miniApp])
        // 1,000 four-byte characters: valid by length, 4,000 bytes once rendered.
        let body = String(repeating: "\u{1F680}", count: 1_000)
        let refused = try harness.start(partner, user, alert: #"{"title":"Launch","body":"\#(body)"}"#)
        #expect(refused.status == 422 && code(refused) == "payload_too_large", "\(refused.text)")
        #expect(field(refused) == "alert")
        #expect(try activityRows() == 0)
        let id = try harness.activityID(harness.start(partner, user))
        let update = try harness.update(partner, id, #"{"alert":{"title":"Launch","body":"\#(body)"}}"#)
        #expect(update.status == 422 && code(update) == "payload_too_large")
        #expect(try harness.db.count("SELECT version FROM live_activities WHERE id = $1::uuid", [id]) == 1)
    }

    @Test func theSessionWindowIsConfigurable() throws {
        let base = [
            "HERALD_DATABASE_URL": "postgres://x", "HERALD_ADMIN_TOKEN": "admin-token-0123456789",
            "HERALD_HOST_TOKEN": "host-token-0123456789",
            "HERALD_SIGNING_KEYS": "k1:" + Data(count: 32).base64EncodedString(),
        ]
        #expect(try IntakeConfiguration.fromEnvironment(base).sessionWindowDays == 30)
        var custom = base
        custom["HERALD_SESSION_WINDOW_DAYS"] = "2"
        #expect(try IntakeConfiguration.fromEnvironment(custom).sessionWindowDays == 2)
        for bad in ["0", "3651", "month"] {
            custom["HERALD_SESSION_WINDOW_DAYS"] = bad
            #expect(throws: ConfigurationError.self, "\(bad)") { try IntakeConfiguration.fromEnvironment(custom) }
        }

        let strict = try LiveActivityHarness(configure: { $0.sessionWindowDays = 2 })
        let partner = try strict.partner()
        let user = try strict.user(sessionWith: [partner.miniApp])
        try strict.db.connection.query(
            "UPDATE mini_app_sessions SET last_seen_at = now() - interval '3 days' WHERE user_id = $1", [user.id])
        #expect(code(try strict.start(partner, user)) == "no_session")
        try strict.db.connection.query(
            "UPDATE mini_app_sessions SET last_seen_at = now() - interval '1 day' WHERE user_id = $1", [user.id])
        #expect(try strict.start(partner, user).status == 201)
    }
}
