import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

/// `heraldctl webhooks replay` as an operator runs it (the real executable).
@Suite("heraldctl webhooks replay", .requiresDatabase)
struct WebhookReplayTests {
    static func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws {
        let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
        defer { pool.close() }
        _ = try pool.withConnection { try $0.query(sql, parameters) }
    }

    /// A partner (with a webhook or not) and `failed` failed events of it.
    static func partner(webhook: Bool, failed: Int) throws -> (id: UUID, miniApp: String, events: [UUID]) {
        _ = HeraldCtlTests.migrated
        let id = UUID()
        let miniApp = "hook." + UUID().uuidString.prefix(8).lowercased()
        try execute("INSERT INTO tenants (id) VALUES ('t-hooks') ON CONFLICT DO NOTHING")
        try execute(
            """
            INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                  rate_limit_per_day, webhook_url, webhook_secret)
            VALUES ($1, $2, 'Hooks', 't-hooks', $3, 60, 1000, $4, $5)
            """,
            [
                id, miniApp, UUID().uuidString, webhook ? "https://hooks.example.com/h" : nil,
                webhook ? "whsec_" + String(repeating: "0", count: 64) : nil,
            ])
        var events: [UUID] = []
        for _ in 0..<failed {
            let event = UUID()
            try execute(
                """
                INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, state,
                                            available_at, attempts, last_status, last_error, finished_at)
                VALUES ($1, $2, 'push.completed', gen_random_uuid(), '{}', now() - interval '2 days',
                        now() - interval '2 days', 'failed', now() - interval '2 days', 9, 500, 'http_500',
                        now() - interval '1 day')
                """, [event, id])
            events.append(event)
        }
        return (id, miniApp, events)
    }

    static func json(_ arguments: [String]) throws -> (status: Int32, json: JSONValue?) {
        let result = try HeraldCtlTests.run(arguments)
        return (result.status, try? JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test("a dry run changes nothing; the replay queues failed events with a new window once; no webhook is skipped")
    func replay() throws {
        let hooked = try Self.partner(webhook: true, failed: 3)
        let unhooked = try Self.partner(webhook: false, failed: 1)
        let dry = try Self.json(["webhooks", "replay", "--partner", hooked.miniApp, "--dry-run", "--json"])
        #expect(dry.status == 0)
        #expect(dry.json?["matched"] == .number(3) && dry.json?["replayed"] == .number(0))
        #expect(dry.json?["wouldReplay"] == .number(3))
        #expect(
            try HeraldCtlTests.count(
                "SELECT count(*) FROM webhook_events WHERE partner_id = $1 AND state = 'failed'",
                [hooked.id]) == 3)

        let done = try Self.json(["webhooks", "replay", "--partner", hooked.id.uuidString, "--json"])
        #expect(done.status == 0)
        #expect(done.json?["matched"] == .number(3) && done.json?["replayed"] == .number(3))
        #expect(
            try HeraldCtlTests.count(
                """
                SELECT count(*) FROM webhook_events WHERE partner_id = $1 AND state = 'pending' AND attempts = 0
                   AND window_start > now() - interval '1 minute' AND available_at <= now() AND finished_at IS NULL
                """, [hooked.id]) == 3)
        let again = try Self.json(["webhooks", "replay", "--partner", hooked.id.uuidString, "--json"])
        #expect(again.json?["matched"] == .number(0) && again.json?["replayed"] == .number(0))

        let skipped = try Self.json(["webhooks", "replay", "--event", unhooked.events[0].uuidString, "--json"])
        #expect(skipped.json?["matched"] == .number(1) && skipped.json?["replayed"] == .number(0))
        #expect(skipped.json?["skipped"]?["no_webhook"] == .number(1))
    }

    @Test(
        "bad usage exits 2",
        arguments: [
            ["webhooks"], ["webhooks", "replay"], ["webhooks", "resend", "--since", "1h"],
            ["webhooks", "replay", "--event", "x"],
            ["webhooks", "replay", "--since", "1h", "--until", "2h"],
            ["webhooks", "replay", "--since", "1h", "--outcome", "failed"],
        ])
    func usage(_ arguments: [String]) throws {
        #expect(try HeraldCtlTests.run(arguments).status == 2)
    }
    @Test("partners --webhook-url: the secret printed once (create, a first URL), kept on a new URL, rotated, removed")
    func partnerWebhook() throws {
        _ = HeraldCtlTests.migrated
        let miniApp = "hookctl." + UUID().uuidString.prefix(8).lowercased()
        let created = try Self.json([
            "partners", "create", "--mini-app-id", miniApp, "--display-name", "Hooks",
            "--webhook-url", "https://a.example.com/h", "--json",
        ])
        #expect(created.status == 0)
        let id = try #require(created.json?["id"]?.stringValue)
        let first = try #require(created.json?["webhookSecret"]?.stringValue)
        #expect(first.hasPrefix("whsec_") && first.count == 70)
        let stored = { () throws -> String? in
            let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
            defer { pool.close() }
            return try pool.withConnection {
                try $0.query("SELECT webhook_secret FROM partners WHERE id = $1::uuid", [id]).first!.optionalString(0)
            }
        }
        #expect(try stored() == first)
        let moved = try Self.json(["partners", "update", id, "--webhook-url", "https://b.example.com/h", "--json"])
        #expect(moved.json?["webhookUrl"] == .string("https://b.example.com/h"))
        let movedSecret = try #require(moved.json?["webhookSecret"]?.stringValue)
        #expect(movedSecret != first && movedSecret.hasPrefix("whsec_"))
        #expect(try stored() == movedSecret)
        let rotated = try Self.json(["partners", "rotate-webhook-secret", id, "--json"])
        let second = try #require(rotated.json?["webhookSecret"]?.stringValue)
        #expect(second != movedSecret)
        #expect(try stored() == second)
        let text = try HeraldCtlTests.run(["partners", "list"])
        #expect(!text.output.contains(second))
        let removed = try Self.json(["partners", "update", id, "--no-webhook", "--json"])
        #expect(removed.json?["webhookUrl"] == .null)
        #expect(try stored() == nil)
        #expect(try HeraldCtlTests.run(["partners", "rotate-webhook-secret", id]).status == 1)
        let again = try Self.json(["partners", "update", id, "--webhook-url", "https://c.example.com/h", "--json"])
        #expect(again.json?["webhookSecret"]?.stringValue?.hasPrefix("whsec_") == true)
        #expect(
            try HeraldCtlTests.run(["partners", "update", id, "--webhook-url", "http://x/", "--no-webhook"]).status == 2
        )
        #expect(
            try HeraldCtlTests.run(["partners", "update", id, "--webhook-url", "http://insecure.example.com/"]).status
                == 1)
    }
}
