import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

/// `heraldctl stats`, the replay's usage errors, `--help` everywhere and the output styles, with the
/// real executable.
@Suite("heraldctl stats, usage and output", .requiresDatabase)
struct StatsTests {
    @Test(
        "stats: the outbox by state, lane and partner, the oldest due row's wait, outcomes in the last 5 minutes and hour"
    )
    func stats() throws {
        let (url, pool, close) = try HeraldCtlTests.migratedDatabase()
        defer { close() }
        try pool.withConnection { c in
            _ = try c.execute(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
                VALUES ('00000000-0000-0000-0000-0000000000a1', 'stats.a', 'A', 't1', 'x', 60, 10000),
                       ('00000000-0000-0000-0000-0000000000a2', 'stats.b', 'B', 't1', 'y', 60, 10000)
                """)
            // a: 3 due realtime rows (the oldest 90 s old), 2 bulk; b: 1 scheduled, 4 leased.
            _ = try c.execute(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, state, service, user_id,
                                        device_id, environment, payload, available_at)
                SELECT gen_random_uuid(), gen_random_uuid(), now(), p, lane, state, 'apns', 'u', 'd', 'production', '{}', at
                  FROM (VALUES ('00000000-0000-0000-0000-0000000000a1'::uuid, 0, 'pending', now() - interval '90 seconds'),
                               ('00000000-0000-0000-0000-0000000000a1', 0, 'pending', now() - interval '10 seconds'),
                               ('00000000-0000-0000-0000-0000000000a1', 0, 'pending', now()),
                               ('00000000-0000-0000-0000-0000000000a1', 1, 'pending', now()),
                               ('00000000-0000-0000-0000-0000000000a1', 1, 'pending', now()),
                               ('00000000-0000-0000-0000-0000000000a2', 0, 'pending', now() + interval '1 hour'),
                               ('00000000-0000-0000-0000-0000000000a2', 0, 'leased', now()),
                               ('00000000-0000-0000-0000-0000000000a2', 0, 'leased', now()),
                               ('00000000-0000-0000-0000-0000000000a2', 0, 'leased', now()),
                               ('00000000-0000-0000-0000-0000000000a2', 0, 'leased', now())) AS v (p, lane, state, at)
                """)
            // History: 2 sent and 1 failed a minute ago, 5 sent 30 minutes ago, 7 dead 2 hours ago (outside).
            _ = try c.execute(
                """
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                              attempts, created_at, finished_at)
                SELECT gen_random_uuid(), gen_random_uuid(), '00000000-0000-0000-0000-0000000000a1', 0, 'apns', 'u', 'd',
                       outcome, 1, now(), now() - age
                  FROM (VALUES ('sent', interval '1 minute', 2), ('failed', interval '1 minute', 1),
                               ('sent', interval '30 minutes', 5), ('dead', interval '2 hours', 7)) AS v (outcome, age, n),
                       generate_series(1, n)
                """)
        }
        let result = try HeraldCtlTests.run(["stats", "--json"], url: url)
        #expect(result.status == 0, "\(result.output)")
        let json = try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(json.objectKeys == ["queue", "oldestDueSeconds", "outcomes"])
        let queue = try #require(json["queue"]?.arrayValue).map { group -> String in
            #expect(group.objectKeys == ["state", "lane", "partner", "count"])
            return "\(group["state"]!.stringValue!) \(group["lane"]!.stringValue!) \(group["partner"]!.stringValue!) "
                + "\(Int(group["count"]!.numberValue!))"
        }
        #expect(
            queue == [
                "leased realtime stats.b 4", "pending realtime stats.a 3", "pending bulk stats.a 2",
                "scheduled realtime stats.b 1",
            ])
        let oldest = try #require(json["oldestDueSeconds"]?.numberValue)
        #expect(oldest >= 90 && oldest < 150, "\(oldest)")
        let recent = try #require(json["outcomes"]?["5m"])
        let hour = try #require(json["outcomes"]?["1h"])
        #expect(
            recent.objectKeys == [
                "sent", "failed", "dead", "token_invalid", "expired", "suppressed", "superseded",
                "cancelled",
            ])
        #expect(recent["sent"] == .number(2) && recent["failed"] == .number(1) && recent["dead"] == .number(0))
        #expect(hour["sent"] == .number(7) && hour["failed"] == .number(1) && hour["dead"] == .number(0))

        // Piped: one fact per line, tab-separated, no header.
        let plain = try HeraldCtlTests.run(["stats"], url: url)
        let lines = plain.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("queue\tpending\tbulk\tstats.a\t2"), "\(plain.output)")
        #expect(lines.contains("outcomes\t1h\tsent\t7"), "\(plain.output)")
        #expect(lines.contains { $0.hasPrefix("oldest_due_seconds\t") })
    }

    @Test("on a terminal: aligned tables with a header and relative times")
    func terminal() throws {
        // util-linux `script` gives the command a pseudo-terminal, as an operator's shell would.
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(
            FileManager.default.isExecutableFile(atPath: script.path), "/usr/bin/script (util-linux) is missing")
        _ = HeraldCtlTests.migrated
        let miniApp = "tty." + UUID().uuidString.prefix(8).lowercased()
        #expect(
            try HeraldCtlTests.run(["partners", "create", "--mini-app-id", miniApp, "--display-name", "Tty"]).status
                == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        let command = "\(HeraldCtlTests.executable.path) partners list; \(HeraldCtlTests.executable.path) stats"
        let result = try ChildProcess.run(script, ["-qec", command, "/dev/null"], environment: environment)
        #expect(result.status == 0, "\(result.output)")
        let output = result.output.replacingOccurrences(of: "\r", with: "")
        #expect(output.contains("ID ") && output.contains("MINI-APP") && output.contains("CREATED"), "\(output)")
        let row = try #require(output.split(separator: "\n").first { $0.contains(miniApp) })
        #expect(row.contains(" ago") || row.contains("just now"), "\(row)")
        #expect(!row.contains("\t"))
        #expect(output.contains("FINISHED") && output.contains("last 5 min"), "\(output)")
    }

    @Test(
        "--help on every command and subcommand exits 0 with that command's usage",
        arguments: [
            ["help"], ["--help"], ["migrate", "--help"], ["partitions", "--help"], ["stats", "--help"],
            ["replay", "--help"],
            ["backfill", "--help"], ["expire", "--help"], ["partners", "--help"], ["partners", "create", "--help"],
            ["partners", "list", "-h"], ["partners", "update", "--help"], ["partners", "rotate-key", "--help"],
            ["partners", "revoke", "--help"], ["partners", "rotate-webhook-secret", "--help"],
            ["partners", "end-previous-webhook-secret", "--help"], ["webhooks", "--help"],
            ["help", "replay"], ["probe", "--help"], ["tokens", "--help"],
        ])
    func help(_ arguments: [String]) throws {
        // No database is needed for help.
        let result = try HeraldCtlTests.run(arguments, url: "")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasPrefix("usage: heraldctl"), "\(result.output)")
        let named = arguments.filter { !$0.hasPrefix("-") && $0 != "help" }
        if let command = named.first {
            #expect(result.output.contains("heraldctl " + named.joined(separator: " ")), "\(result.output)")
            #expect(result.output.contains(command))
        }
    }

    @Test(
        "replay, stats, tokens, partners: bad usage exits 2 naming the problem, an unknown partner fails (1)",
        arguments: [
            (["replay"], Int32(2), "at least one of"),
            (["replay", "--outcome", "failed"], 2, "at least one of"),
            (["replay", "--outcome", "sent", "--since", "1h"], 2, "--outcome"),
            (["replay", "--request", "not-a-uuid"], 2, "--request"),
            (["replay", "--since", "yesterday"], 2, "--since"),
            (["replay", "--since", "1h", "--until", "2h"], 2, "before --until"),
            (["replay", "--partner", "a.b", "--partner", "c.d"], 2, "once"),
            (["replay", "--since", "1h", "extra"], 2, "options only"),
            (["replay", "--since", "1h", "--frobnicate", "x"], 2, "unknown option"),
            (["stats", "--dry-run"], 2, "unknown option"),
            (["stats", "extra"], 2, "no arguments"),
            (["tokens", "extra"], 2, "no arguments"),
            (["tokens", "--since", "yesterday"], 2, "--since"),
            (["tokens", "--since", "1h", "--until", "2h"], 2, "before --until"),
            (["tokens", "--reason", "x"], 2, "unknown option"),
            (["replay", "--partner", "no.such.app", "--dry-run"], 1, "no partner"),
            (
                ["partners", "rotate-webhook-secret", UUID().uuidString, "--previous-secret-valid", "8d"], 2,
                "--previous-secret-valid must be at most 7d"
            ),
            (
                ["partners", "rotate-webhook-secret", UUID().uuidString, "--previous-secret-valid", "soon"], 2,
                "--previous-secret-valid must be a duration"
            ),
            (["partners", "rotate-webhook-secret", UUID().uuidString], 1, "no such active partner with a webhook"),
            (["partners", "end-previous-webhook-secret", UUID().uuidString], 1, "no such active partner"),
        ])
    func usage(_ arguments: [String], _ expected: Int32, _ message: String) throws {
        let result = try HeraldCtlTests.run(arguments)
        #expect(result.status == expected, "\(result.output)")
        #expect(result.output.contains(message), "\(result.output)")
        if expected == 2 { #expect(result.output.contains("usage: heraldctl \(arguments[0])"), "\(result.output)") }
    }

    @Test("every other command's --json is one object of a fixed shape")
    func jsonShapes() throws {
        func json(_ arguments: [String]) throws -> JSONValue {
            let result = try HeraldCtlTests.run(arguments)
            #expect(result.status == 0, "\(result.output)")
            return try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(try json(["migrate", "--json"]).objectKeys == ["applied"])
        #expect(try json(["expire", "--json"]).objectKeys == ["expired", "started", "refused"])
        let partitions = try json(["partitions", "--json"])
        #expect(partitions.objectKeys == ["dropped", "partitions"])
        #expect(partitions["partitions"]?.arrayValue?.first?.objectKeys == ["table", "partition", "bounds"])
        let partner = [
            "id", "miniAppId", "displayName", "tenantId", "rateLimitPerMinute", "rateLimitPerDay", "iconUrl", "icon",
            "webhookUrl",
            "sound", "allowTimeSensitive", "createdAt", "revokedAt", "suspendedAt",
            "previousKeyExpiresAt", "previousWebhookSecretExpiresAt",
        ]
        let miniApp = "shape." + UUID().uuidString.prefix(8).lowercased()
        let created = try json(["partners", "create", "--mini-app-id", miniApp, "--display-name", "Shape", "--json"])
        #expect(created.objectKeys == partner + ["apiKey"])
        let id = try #require(created["id"]?.stringValue)
        let list = try json(["partners", "list", "--json"])
        #expect(list.objectKeys == ["partners"])
        #expect(list["partners"]?.arrayValue?.allSatisfy { $0.objectKeys == partner } == true)
        #expect(try json(["partners", "update", id, "--display-name", "Shape 2", "--json"]).objectKeys == partner)
        #expect(try json(["partners", "rotate-key", id, "--json"]).objectKeys == partner + ["apiKey"])
        #expect(
            try json(["partners", "rotate-key", id, "--previous-key-valid", "1h", "--json"]).objectKeys == partner + [
                "apiKey"
            ])
        #expect(try json(["partners", "end-previous-key", id, "--json"]).objectKeys == partner)
        let hooked = try json(["partners", "update", id, "--webhook-url", "https://hooks.example.com/h", "--json"])
        #expect(hooked.objectKeys == partner + ["webhookSecret"])
        #expect(
            try json(["partners", "rotate-webhook-secret", id, "--json"]).objectKeys == partner + ["webhookSecret"])
        let overlapped = try json(["partners", "rotate-webhook-secret", id, "--previous-secret-valid", "1h", "--json"])
        #expect(overlapped.objectKeys == partner + ["webhookSecret"])
        #expect(overlapped["previousWebhookSecretExpiresAt"]?.stringValue != nil, "\(overlapped)")
        let ended = try json(["partners", "end-previous-webhook-secret", id, "--json"])
        #expect(ended.objectKeys == partner && ended["previousWebhookSecretExpiresAt"] == .null)
        let suspended = try json(["partners", "suspend", id, "--json"])
        #expect(suspended.objectKeys == partner && suspended["suspendedAt"]?.stringValue != nil)
        let resumed = try json(["partners", "resume", id, "--json"])
        #expect(resumed.objectKeys == partner && resumed["suspendedAt"] == .null)
        #expect(try json(["partners", "revoke", id, "--json"]).objectKeys == partner)
    }

    @Test("replay --json: exactly the documented shape, also when nothing matches")
    func replayShape() throws {
        let result = try HeraldCtlTests.run(["replay", "--since", "1m", "--json"])
        #expect(result.status == 0, "\(result.output)")
        let json = try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(json.objectKeys == ["matched", "replayed", "skipped"])
        #expect(
            json["skipped"]?.objectKeys == [
                "token_invalid", "opted_out", "device_removed", "already_replayed",
                "partner_revoked", "retracted",
            ])
        let dry = try HeraldCtlTests.run(["replay", "--since", "1m", "--dry-run", "--json"])
        let dryJSON = try JSONParser.parse(dry.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(dryJSON["replayed"] == .number(0))
        #expect(dryJSON.objectKeys == ["matched", "replayed", "skipped", "wouldReplay"])
    }
}

extension JSONValue {
    /// An object's keys in document order (nil for anything else): shape checks.
    var objectKeys: [String]? { objectMembers?.map(\.key) }
}
