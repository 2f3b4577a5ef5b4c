import Foundation
import HeraldCore
import HeraldTestSupport
import Postgres
import Testing

/// heraldctl as an operator runs it: the real executable against the test server.
@Suite("heraldctl", .requiresDatabase)
struct HeraldCtlTests {
    static var executable: URL { TestEnvironment.binDirectory.appendingPathComponent("heraldctl") }

    /// The suite's database, migrated by `heraldctl migrate` itself before any test uses it (test
    /// targets run in any order, so none may rely on another having migrated it).
    static let migrated: Void = {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        guard let result = try? ChildProcess.run(executable, ["migrate"], environment: environment), result.status == 0
        else {
            fatalError("heraldctl migrate failed on the test database")
        }
    }()

    /// A count from the suite's database.
    static func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
        defer { pool.close() }
        return try pool.withConnection { try $0.query(sql, parameters).first!.int(0) }
    }

    static func run(_ arguments: [String], url: String = TestEnvironment.databaseURL) throws -> (
        status: Int32, output: String
    ) {
        _ = migrated
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = url
        return try ChildProcess.run(executable, arguments, environment: environment)
    }

    static func freshDatabase() throws -> (url: String, drop: () -> Void) {
        let name = "herald_" + UUID().uuidString.prefix(8).lowercased()
        let admin = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 1))
        try admin.withConnection { try $0.execute("CREATE DATABASE \(name)") }
        return (
            TestEnvironment.databaseURL(named: name),
            {
                _ = try? admin.withConnection { try $0.execute("DROP DATABASE \(name) WITH (FORCE)") }
                admin.close()
            }
        )
    }

    /// A fresh database migrated by heraldctl, with tenant t1, and a pool on it: `close` closes the pool
    /// and drops the database.
    static func migratedDatabase() throws -> (url: String, pool: PostgresPool, close: () -> Void) {
        let (url, drop) = try freshDatabase()
        guard try run(["migrate"], url: url).status == 0 else {
            drop()
            throw TestHTTPClient.Failure(description: "heraldctl migrate failed on a fresh database")
        }
        let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
        try pool.withConnection { _ = try $0.execute("INSERT INTO tenants (id) VALUES ('t1')") }
        return (
            url, pool,
            {
                pool.close(); drop()
            }
        )
    }

    @Test(
        "four concurrent `heraldctl migrate` runs on an empty database all succeed and apply each file and definition once"
    )
    func concurrentMigrate() throws {
        let database = try Self.freshDatabase()
        defer { database.drop() }
        let url = database.url
        let results = runInParallel(4) { _ in try? Self.run(["migrate", "--json"], url: url) }
        #expect(results.allSatisfy { $0?.status == 0 }, "\(results.map { $0?.output ?? "nil" })")
        let applied = results.compactMap { $0 }.flatMap { result -> [String] in
            let json = try? JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
            return json?["applied"]?.arrayValue?.compactMap(\.stringValue) ?? []
        }
        #expect(applied.count == Set(applied).count)
        #expect(applied.count >= 4)
        // The definition files too: each applied by exactly one of the runs, and recorded once.
        #expect(applied.filter { $0 == "functions/claim_deliveries.sql" }.count == 1)
        let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
        defer { pool.close() }
        let recorded = try pool.withConnection { try $0.query("SELECT count(*) FROM schema_functions").first!.int(0) }
        #expect(recorded == applied.filter { $0.hasPrefix("functions/") }.count)
        #expect(recorded > 0)
        let again = try Self.run(["migrate"], url: database.url)
        #expect(again.status == 0)
        #expect(again.output.contains("up to date"))
    }

    @Test("partners: create prints the key once, list/update/rotate/revoke work, JSON with --json")
    func partners() throws {
        let miniApp = "ctl." + UUID().uuidString.prefix(8).lowercased()
        let created = try Self.run([
            "partners", "create", "--mini-app-id", miniApp, "--display-name", "Ctl",
            "--tenant", "ctl-tenant", "--rate-limit-per-minute", "5", "--json",
        ])
        #expect(created.status == 0, "\(created.output)")
        let json = try JSONParser.parse(created.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let id = try #require(json["id"]?.stringValue)
        let key = try #require(json["apiKey"]?.stringValue)
        #expect(key.hasPrefix("mp_") && key.count == 35)
        #expect(json["rateLimitPerMinute"] == .number(5))

        let list = try Self.run(["partners", "list"])
        #expect(list.status == 0)
        #expect(list.output.contains(miniApp))
        #expect(!list.output.contains(key))

        let svg = FileManager.default.temporaryDirectory.appendingPathComponent("logo-\(UUID().uuidString).svg")
        try #"<svg xmlns="http://www.w3.org/2000/svg" width="30" height="10"><rect width="30" height="10"/></svg>"#
            .write(to: svg, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: svg) }
        let updated = try Self.run([
            "partners", "update", id, "--rate-limit-per-day", "77", "--icon-file", svg.path, "--json",
        ])
        let updatedJSON = try JSONParser.parse(updated.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(updatedJSON["rateLimitPerDay"] == .number(77))
        #expect(updatedJSON["iconUrl"] == .null)
        #expect(updatedJSON["icon"]?["path"] == .string("/icons/\(miniApp)/256.png"))
        #expect(try Self.count("SELECT count(*) FROM partner_icons WHERE partner_id = $1::uuid", [id]) == 3)
        // Without HERALD_WEBHOOK_ALLOW_PRIVATE, a loopback iconUrl is refused before any connection.
        let refused = try Self.run(["partners", "update", id, "--icon-url", "https://127.0.0.1:9/logo.png"])
        #expect(refused.status == 1)
        #expect(refused.output.contains("address_refused"))
        let notImage = try Self.run(["partners", "update", id, "--icon-file", "/etc/hostname"])
        #expect(notImage.status == 1)
        #expect(try Self.count("SELECT count(*) FROM partner_icons WHERE partner_id = $1::uuid", [id]) == 3)
        let cleared = try Self.run(["partners", "update", id, "--no-icon", "--json"])
        let clearedJSON = try JSONParser.parse(cleared.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(clearedJSON["iconUrl"] == .null && clearedJSON["icon"] == .null)
        #expect(try Self.count("SELECT count(*) FROM partner_icons WHERE partner_id = $1::uuid", [id]) == 0)
        let rotated = try Self.run(["partners", "rotate-key", id])
        #expect(rotated.status == 0)
        #expect(rotated.output.contains("mp_"))
        #expect(!rotated.output.contains(key))
        // With an overlap the old key's end is shown, and end-previous-key ends it.
        let before = Date()
        let overlapped = try Self.run(["partners", "rotate-key", id, "--previous-key-valid", "24h", "--json"])
        let overlappedJSON = try JSONParser.parse(overlapped.output.trimmingCharacters(in: .whitespacesAndNewlines))
        let until = try #require(overlappedJSON["previousKeyExpiresAt"]?.stringValue.flatMap(ISO8601.parse))
        #expect(abs(until.timeIntervalSince(before) - 86_400) < 60, "\(overlapped.output)")
        #expect(
            try Self.count("SELECT count(*) FROM partners WHERE id = $1::uuid AND previous_key_hash IS NOT NULL", [id])
                == 1)
        #expect(try Self.run(["partners", "list"]).output.contains(ISO8601.format(until).prefix(16)))
        let ended = try Self.run(["partners", "end-previous-key", id, "--json"])
        #expect(
            try JSONParser.parse(ended.output.trimmingCharacters(in: .whitespacesAndNewlines))["previousKeyExpiresAt"]
                == .null)
        #expect(
            try Self.count("SELECT count(*) FROM partners WHERE id = $1::uuid AND previous_key_hash IS NULL", [id]) == 1
        )
        for bad in ["8d", "soon", "-5", "1h30m"] {
            let refused = try Self.run(["partners", "rotate-key", id, "--previous-key-valid", bad])
            #expect(refused.status == 2, "\(bad): \(refused.output)")
            #expect(refused.output.contains("--previous-key-valid"), "\(bad): \(refused.output)")
        }
        #expect(
            try Self.run(["partners", "rotate-key", id, "--previous-key-valid", "1h", "--previous-key-valid", "2h"])
                .status == 2)
        let revoked = try Self.run(["partners", "revoke", id, "--json"])
        #expect(
            try JSONParser.parse(revoked.output.trimmingCharacters(in: .whitespacesAndNewlines))["revokedAt"] != .null)
        #expect(try Self.run(["partners", "rotate-key", id]).status == 1)
        #expect(try Self.run(["partners", "end-previous-key", id]).status == 1)

        // Each change is in the audit trail as heraldctl's, with the OS user; never a key.
        let audit = try Self.run(["audit", "--partner", id, "--json"])
        #expect(audit.status == 0, "\(audit.output)")
        let entries =
            try JSONParser.parse(audit.output.trimmingCharacters(in: .whitespacesAndNewlines))["entries"]?
            .arrayValue ?? []
        let actions = entries.compactMap { $0["action"]?.stringValue }
        #expect(actions.first == "partner.revoked" && actions.last == "partner.created", "\(actions)")
        for action in ["partner.updated", "partner.key_rotated", "partner.previous_key_ended"] {
            #expect(actions.contains(action), "\(actions)")
        }
        #expect(
            entries.allSatisfy { $0["actor"] == .string("heraldctl") && $0["actorDetail"] == .string(NSUserName()) })
        #expect(!audit.output.contains(key))
        #expect(try Self.run(["audit", "--partner", miniApp]).output.contains("partner.revoked"))
        for bad in [["audit", "--limit", "0"], ["audit", "--before", "0"], ["audit", "extra"]] {
            #expect(try Self.run(bad).status == 2, "\(bad)")
        }
    }

    @Test("partners: --sound, --silent and the time-sensitive permission on create and update")
    func partnerSoundAndPermission() throws {
        func parsed(_ result: (status: Int32, output: String)) throws -> JSONValue {
            try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let plain = try parsed(
            Self.run([
                "partners", "create", "--mini-app-id", "snd." + UUID().uuidString.prefix(8).lowercased(),
                "--display-name", "Plain", "--json",
            ]))
        #expect(plain["sound"] == .string("default"))
        #expect(plain["allowTimeSensitive"] == .bool(false))

        let created = try Self.run([
            "partners", "create", "--mini-app-id", "snd." + UUID().uuidString.prefix(8).lowercased(),
            "--display-name", "Loud", "--sound", "chime.caf", "--allow-time-sensitive", "--json",
        ])
        #expect(created.status == 0, "\(created.output)")
        let json = try parsed(created)
        #expect(json["sound"] == .string("chime.caf"))
        #expect(json["allowTimeSensitive"] == .bool(true))
        let id = try #require(json["id"]?.stringValue)

        let silenced = try parsed(
            Self.run(["partners", "update", id, "--silent", "--disallow-time-sensitive", "--json"]))
        #expect(silenced["sound"] == .null)
        #expect(silenced["allowTimeSensitive"] == .bool(false))
        #expect(
            try Self.count(
                "SELECT count(*) FROM partners WHERE id = $1::uuid AND sound IS NULL AND NOT allow_time_sensitive",
                [id]) == 1)
        // Neither option given: both stay.
        let kept = try parsed(Self.run(["partners", "update", id, "--rate-limit-per-day", "9", "--json"]))
        #expect(kept["sound"] == .null && kept["allowTimeSensitive"] == .bool(false))
        let text = try Self.run(["partners", "update", id, "--sound", "ping.aiff", "--allow-time-sensitive"])
        #expect(text.status == 0)
        #expect(text.output.contains("sound=ping.aiff") && text.output.contains("time-sensitive"))

        // A bad name is the admin API's rule (exit 1, nothing changed); contradictory options are usage errors.
        let bad = try Self.run(["partners", "update", id, "--sound", "../chime.caf"])
        #expect(bad.status == 1)
        #expect(bad.output.contains("sound must be"))
        #expect(try Self.run(["partners", "update", id, "--sound", "a.caf", "--silent"]).status == 2)
        #expect(
            try Self.run(["partners", "update", id, "--allow-time-sensitive", "--disallow-time-sensitive"]).status == 2)
        #expect(
            try Self.run([
                "partners", "create", "--mini-app-id", "snd.x", "--display-name", "X",
                "--disallow-time-sensitive",
            ]).status == 2)
        #expect(
            try Self.count(
                "SELECT count(*) FROM partners WHERE id = $1::uuid AND sound = 'ping.aiff' AND allow_time_sensitive",
                [id]) == 1)
    }

    @Test("new partners take the defaults the intake uses from the environment")
    func environmentDefaults() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        environment["HERALD_DEFAULT_TENANT"] = "env-tenant"
        environment["HERALD_DEFAULT_RATE_LIMIT_PER_MINUTE"] = "7"
        environment["HERALD_DEFAULT_RATE_LIMIT_PER_DAY"] = "70"
        let miniApp = "env." + UUID().uuidString.prefix(8).lowercased()
        _ = Self.migrated
        let result = try ChildProcess.run(
            Self.executable,
            [
                "partners", "create", "--mini-app-id", miniApp,
                "--display-name", "Env", "--json",
            ], environment: environment)
        let json = try JSONParser.parse(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(json["tenantId"] == .string("env-tenant"))
        #expect(json["rateLimitPerMinute"] == .number(7))
        #expect(json["rateLimitPerDay"] == .number(70))
    }

    @Test(
        "bad usage exits 2, failures exit 1",
        arguments: [
            (["frobnicate"], Int32(2)),
            (["partners"], Int32(2)),
            (["partners", "create", "--display-name", "X"], Int32(2)),
            (["partners", "update", "not-a-uuid"], Int32(2)),
            (["migrate", "--unknown-option", "1"], Int32(2)),
            (["partners", "revoke", "00000000-0000-0000-0000-000000000000"], Int32(1)),
            (["partners", "create", "--mini-app-id", "bad id", "--display-name", "X"], Int32(1)),
        ])
    func exitStatus(_ arguments: [String], _ expected: Int32) throws {
        #expect(try Self.run(arguments).status == expected)
    }

    @Test("an unreachable database is a failure with a clear message")
    func unreachable() throws {
        let result = try Self.run(["migrate"], url: "postgresql://postgres@/herald?host=/nonexistent-dir")
        #expect(result.status == 1)
        #expect(result.output.contains("unavailable"))
    }

    @Test("partitions creates months ahead and lists them")
    func partitions() throws {
        let result = try Self.run(["partitions", "--months-ahead", "4", "--list"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("push_requests_"))
        #expect(result.output.contains("delivery_history_"))
        #expect(try Self.run(["partitions", "--retention-days", "3"]).status == 2)
    }

    @Test("expire ends every Live Activity past its TTL, in batches, once: a second run finds none")
    func expire() throws {
        let (url, pool, close) = try Self.migratedDatabase()
        defer { close() }
        try pool.withConnection { c in
            _ = try c.execute(
                """
                INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute, rate_limit_per_day)
                VALUES ('00000000-0000-0000-0000-0000000000bb', 'expire.app', 'Expire', 't1', 'x', 60, 10000)
                """)
            _ = try c.execute("INSERT INTO users (id, tenant_id) SELECT 'u' || g, 't1' FROM generate_series(1, 1201) g")
            _ = try c.execute(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, fcm_token)
                SELECT 'u' || g, 'pixel', 'android', 'production', 'fcm-' || g || repeat('x', 40) FROM generate_series(1, 1201) g
                """)
            // 1,200 past their TTL (more than one sweep batch) and one still running.
            _ = try c.execute(
                """
                INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                             last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                             fcm_end_payload, end_timestamp)
                SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000bb', 'expire.app', 'u' || g, 'progress',
                       '{}', '{}', '{}', 0, now() - interval '1 hour', now(),
                       CASE WHEN g = 1 THEN now() + interval '1 hour' ELSE now() - interval '1 minute' END,
                       '{"aps":{}}', '{"data":{}}', 0
                  FROM generate_series(1, 1201) g
                """)
            _ = try c.execute(
                """
                INSERT INTO live_activity_targets (activity_id, device_id, service) SELECT id, 'pixel', 'fcm' FROM live_activities
                """)
        }
        let first = try Self.run(["expire", "--json"], url: url)
        #expect(first.status == 0, "\(first.output)")
        #expect(
            try JSONParser.parse(first.output.trimmingCharacters(in: .whitespacesAndNewlines))["expired"]?.numberValue
                == 1200)
        let counts = try pool.withConnection { c in
            (
                try c.query("SELECT count(*) FROM live_activities WHERE status = 'expired'").first!.int(0),
                try c.query(
                    "SELECT count(*) FROM deliveries WHERE activity_event = 'end' AND payload = '{\"data\":{}}'"
                ).first!.int(0)
            )
        }
        #expect(counts.0 == 1200)
        #expect(counts.1 == 1200)
        let second = try Self.run(["expire"], url: url)
        #expect(second.status == 0 && second.output.contains("expired 0 live activities"), "\(second.output)")
    }
}
