import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

/// `heraldctl tokens`: a window's token invalidations by upstream, token and reason, with the real
/// executable against a migrated database.
@Suite("heraldctl tokens", .requiresDatabase)
struct TokensCommandTests {
    @Test("tokens: invalidations by upstream, token and reason in the window; skipped sends apart")
    func tokens() throws {
        let (url, pool, close) = try HeraldCtlTests.migratedDatabase()
        defer { close() }
        try pool.withConnection { c in
            // In the last hour: a storm of BadDeviceToken on APNs over 3 devices (one twice), 2 Unregistered, an FCM
            // UNREGISTERED, a push-to-start and an activity token, 4 skipped sends; 2 days ago (outside the
            // default window) another Unregistered; sent rows never count.
            _ = try c.execute(
                """
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                              attempts, last_error, created_at, finished_at, activity_event)
                SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 0, service, user_id, 'd', outcome, 1,
                       reason, now(), now() - age, event
                  FROM (VALUES ('apns', 'u1', 'token_invalid', 'BadDeviceToken', interval '10 minutes', NULL),
                               ('apns', 'u1', 'token_invalid', 'BadDeviceToken', interval '9 minutes', NULL),
                               ('apns', 'u2', 'token_invalid', 'BadDeviceToken', interval '8 minutes', NULL),
                               ('apns', 'u3', 'token_invalid', 'BadDeviceToken', interval '7 minutes', NULL),
                               ('apns', 'u4', 'token_invalid', 'Unregistered', interval '20 minutes', NULL),
                               ('apns', 'u5', 'token_invalid', 'Unregistered', interval '30 minutes', NULL),
                               ('apns', 'u6', 'token_invalid', 'Unregistered', interval '2 days', NULL),
                               ('apns', 'u7', 'token_invalid', 'Unregistered', interval '5 minutes', 'start'),
                               ('apns', 'u8', 'token_invalid', 'ExpiredToken', interval '5 minutes', 'update'),
                               ('fcm', 'u9', 'token_invalid', 'UNREGISTERED', interval '5 minutes', NULL),
                               ('apns', 'u1', 'token_invalid', 'token_invalidated', interval '1 minute', NULL),
                               ('apns', 'u1', 'token_invalid', 'token_invalidated', interval '1 minute', NULL),
                               ('apns', 'u1', 'token_invalid', 'token_invalidated', interval '1 minute', NULL),
                               ('fcm', 'u10', 'token_invalid', 'no_token', interval '1 minute', NULL),
                               ('apns', 'u11', 'sent', NULL, interval '1 minute', NULL))
                       AS v (service, user_id, outcome, reason, age, event)
                """)
        }
        let result = try HeraldCtlTests.run(["tokens", "--json"], url: url)
        #expect(result.status == 0, "\(result.output)")
        let json = try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(json.objectKeys == ["since", "until", "invalidations", "total", "skipped"])
        let lines = try #require(json["invalidations"]?.arrayValue).map { line -> String in
            #expect(line.objectKeys == ["upstream", "token", "reason", "count", "devices", "first", "last"])
            return "\(line["upstream"]!.stringValue!) \(line["token"]!.stringValue!) \(line["reason"]!.stringValue!) "
                + "\(Int(line["count"]!.numberValue!)) \(Int(line["devices"]!.numberValue!))"
        }
        #expect(
            lines == [
                "apns apns BadDeviceToken 4 3", "apns apns Unregistered 2 2",
                "apns apnsPushToStart Unregistered 1 1", "apns liveActivity ExpiredToken 1 1",
                "fcm fcm UNREGISTERED 1 1",
            ])
        #expect(json["total"] == .number(9))
        #expect(json["skipped"]?["token_invalidated"] == .number(3))
        #expect(json["skipped"]?["no_token"] == .number(1))

        // A wider window takes in the older one.
        let wide = try HeraldCtlTests.run(["tokens", "--since", "3d", "--json"], url: url)
        let wideJSON = try JSONParser.parse(wide.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(wideJSON["total"] == .number(10))

        // Piped: one fact per line, tab-separated.
        let plain = try HeraldCtlTests.run(["tokens"], url: url)
        #expect(plain.status == 0)
        let text = plain.output.split(separator: "\n").map(String.init)
        #expect(text.contains { $0.hasPrefix("invalidations\tapns\tapns\tBadDeviceToken\t4\t3\t") }, "\(plain.output)")
        #expect(text.contains("skipped\ttoken_invalidated\t3"), "\(plain.output)")

        // A quiet window says so.
        let quiet = try HeraldCtlTests.run(["tokens", "--since", "2h", "--until", "1h", "--json"], url: url)
        let quietJSON = try JSONParser.parse(quiet.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(quietJSON["invalidations"] == .array([]) && quietJSON["total"] == .number(0))
    }
}
