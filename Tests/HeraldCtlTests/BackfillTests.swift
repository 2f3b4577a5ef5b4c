import Foundation
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Store
import Testing

@testable import HeraldCore

#if canImport(Glibc)
    import Glibc
#endif

/// `heraldctl backfill sends|users` as an operator runs it: the real executable, a fresh database each.
@Suite("heraldctl backfill", .requiresDatabase)
struct BackfillTests {
    static let tenant = "bf-tenant"

    /// `count` users u0... of `tenant` with an email each and one iOS device (token from the index).
    static func usersFile(_ count: Int, tenant: String = tenant, prefix: String = "u") -> [String] {
        (0..<count).map { index in
            json(
                .object([
                    ("userId", .string("\(prefix)\(index)")), ("tenantId", .string(tenant)),
                    ("emails", .array([.string("\(prefix)\(index)@example.com")])),
                    (
                        "devices",
                        .array([
                            .object([
                                ("deviceId", .string("phone")), ("platform", .string("ios")),
                                ("environment", .string("production")),
                                (
                                    "apnsToken",
                                    .string(String(format: "%064x", index + (prefix == "u" ? 1 : 1_000_000)))
                                ),
                            ])
                        ])
                    ),
                ]))
        }
    }

    static func send(
        _ key: String, partner: String = "bf.app", email: String, title: String = "Hello",
        extra: [(key: String, value: JSONValue)] = []
    ) -> String {
        json(
            .object(
                [
                    ("partner", .string(partner)), ("key", .string(key)),
                    ("recipients", .object([("emails", .array([.string(email)]))])), ("title", .string(title)),
                ] + extra))
    }

    @Test(
        "100,000 lines with bad lines of every kind: each reported with its line and code, the rest enqueued in lane 1 as the intake renders them; a rerun creates nothing"
    )
    func sendsWithBadLines() async throws {
        let database = try BackfillDatabase()
        database.environment = [
            "HERALD_MAX_RECIPIENTS": "5", "HERALD_DEFAULT_TTL_SECONDS": "3600",
            "HERALD_DEEPLINK_SCHEME": "testapp", "HERALD_BACKFILL_BATCH_SIZE": "1000",
        ]
        let users = 2_000
        let loadedUsers = try await database.run([
            "backfill", "users", try writeLines(Self.usersFile(users)).path, "--json",
        ])
        #expect(loadedUsers.status == 0, "\(loadedUsers.stderr)")
        // The same email in another tenant: it never resolves for this partner.
        _ = try await database.run([
            "backfill", "users",
            try writeLines([
                json(
                    .object([
                        ("userId", .string("other")), ("tenantId", .string("elsewhere")),
                        ("emails", .array([.string("stranger@example.com")])),
                    ]))
            ]).path,
        ])
        let partnerID = try database.partner("bf.app", name: "Backfill App", tenant: Self.tenant)
        let revokedID = try database.partner("bf.gone", name: "Gone", tenant: Self.tenant)
        #expect(try await database.run(["partners", "revoke", revokedID.uuidString]).status == 0)
        try database.pool.withConnection {
            _ = try $0.query("INSERT INTO opt_outs (user_id, mini_app_id) VALUES ('u7', 'bf.app')")
        }

        let soon = ISO8601.format(Date().addingTimeInterval(3_600))
        let far = ISO8601.format(Date().addingTimeInterval(8 * 86_400))
        var expected: [Int: String] = [:]
        var lines: [String] = []
        func bad(_ line: String, _ code: String) {
            lines.append(line)
            expected[lines.count] = code
        }
        let total = 100_000
        var blank = 0
        while lines.count < total {
            let n = lines.count + 1
            switch n % 5_000 {
            case 11: bad("{not json", "invalid_json")
            case 12: bad("[1,2,3]", "invalid_json")
            case 13: bad(json(.object([("key", .string("x\(n)")), ("title", .string("t"))])), "missing_field")
            case 14: bad(Self.send("k\(n)", partner: "bf.unknown", email: "u1@example.com"), "unknown_partner")
            case 15: bad(Self.send("k\(n)", partner: "bf.gone", email: "u1@example.com"), "partner_revoked")
            case 16:
                bad(
                    json(
                        .object([
                            ("partner", .string("bf.app")), ("title", .string("t")),
                            ("recipients", .object([("emails", .array([.string("u1@example.com")]))])),
                        ])),
                    "missing_field")
            case 17: bad(Self.send(String(repeating: "k", count: 300), email: "u1@example.com"), "invalid_field")
            case 18:
                bad(
                    Self.send("k\(n)", email: "u1@example.com", title: String(repeating: "t", count: 121)),
                    "invalid_field")
            case 19:
                bad(Self.send("k\(n)", email: "u1@example.com", extra: [("colour", .string("red"))]), "unknown_field")
            case 20:
                bad(
                    Self.send(
                        "k\(n)", email: "u1@example.com",
                        extra: [("deepLink", .string("testapp://miniapp/other.app/x"))]), "deep_link_forbidden")
            case 21:
                bad(
                    Self.send(
                        "k\(n)", email: "u1@example.com",
                        extra: [("deepLink", .string("basedapp://miniapp/bf.app/x"))]), "deep_link_forbidden")
            case 22:
                bad(
                    Self.send("k\(n)", email: "u1@example.com", extra: [("data", .object([("sig", .string("x"))]))]),
                    "invalid_field")
            case 23:
                bad(
                    Self.send(
                        "k\(n)", email: "u1@example.com",
                        extra: [("data", .object([("blob", .string(String(repeating: "x", count: 4_000)))]))]),
                    "payload_too_large")
            case 24:
                bad(
                    json(
                        .object([
                            ("partner", .string("bf.app")), ("key", .string("k\(n)")), ("title", .string("t")),
                            (
                                "recipients",
                                .object([("emails", .array((1...6).map { .string("m\($0)@example.com") }))])
                            ),
                        ])),
                    "too_many_recipients")
            case 25:
                bad(
                    Self.send("k\(n)", email: "u1@example.com", extra: [("sendAt", .string(far))]),
                    "send_at_out_of_range")
            case 26: bad(Self.send("k10", email: "u1@example.com"), "duplicate_key")  // line 10's key, across batches
            case 27: bad(Self.send("k\(n - 18)", email: "u1@example.com"), "duplicate_key")  // in the same batch
            case 28:
                // A blank line: skipped, not counted, but it keeps its number.
                lines.append("")
                blank += 1
            default:
                let user = n % users
                var extra: [(key: String, value: JSONValue)] = [
                    ("body", .string("Body \(n)")), ("deepLink", .string("testapp://miniapp/bf.app/items/\(n)")),
                    ("data", .object([("n", .string("\(n)"))])),
                ]
                if n % 1_000 == 3 { extra.append(("ttlSeconds", .number(600))) }
                if n % 1_000 == 4 { extra.append(("sendAt", .string(soon))) }
                let email = n % 10_000 == 5 ? "stranger@example.com" : "u\(user)@example.com"
                lines.append(Self.send("k\(n)", email: email, title: "Title \(n)", extra: extra))
            }
        }
        let file = try writeLines(lines)
        defer { try? FileManager.default.removeItem(at: file) }

        let started = Date()
        let result = try await database.run(["backfill", "sends", file.path, "--json"])
        let seconds = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try result.json()
        let rejected = try #require(summary["rejected"]?.arrayValue)
        var reported: [Int: String] = [:]
        for entry in rejected {
            reported[Int(entry["line"]!.numberValue!)] = entry["code"]!.stringValue!
            #expect((entry["message"]?.stringValue ?? "").isEmpty == false)
        }
        #expect(reported == expected)
        let accepted = total - blank - expected.count
        #expect(summary["lines"] == .number(Double(total - blank)))
        #expect(summary["accepted"] == .number(Double(accepted)))
        #expect(summary["duplicates"] == .number(0))
        // One device per user; u7 opted out and stranger@ is of another tenant: no delivery for them.
        let noDelivery = (1...total).filter { n in
            expected[n] == nil && n % 5_000 != 28 && (n % 10_000 == 5 || n % users == 7)
        }.count
        #expect(summary["deliveries"] == .number(Double(accepted - noDelivery)))
        print("backfill of \(total) lines took \(String(format: "%.1f", seconds)) s")

        #expect(try database.count("SELECT count(*) FROM push_requests") == accepted)
        #expect(try database.count("SELECT count(*) FROM push_requests WHERE lane <> 1") == 0)
        #expect(try database.count("SELECT count(*) FROM deliveries") == accepted - noDelivery)
        #expect(try database.count("SELECT count(*) FROM deliveries WHERE lane <> 1") == 0)
        #expect(try database.count("SELECT count(*) FROM backfill_keys") == accepted)
        #expect(try database.count("SELECT count(*) FROM user_senders WHERE mini_app_id = 'bf.app'") == users)

        // A few lines against what the intake renders for the same body (PushPreparation, its own code).
        let signer = HMACSigner(keyID: BackfillDatabase.signingKeyID, key: BackfillDatabase.signingKey)
        let profile = PartnerProfile(
            id: partnerID, miniAppID: "bf.app", displayName: "Backfill App", tenantID: Self.tenant,
            iconPath: nil, rateLimitPerMinute: 60, rateLimitPerDay: 10_000, sound: .systemDefault,
            allowTimeSensitive: false)
        var rules = PushRules()
        rules.deepLinkScheme = "testapp"
        for n in [1, 2_003, 50_004, 99_999] {
            let rows = try database.query(
                """
                SELECT d.id, d.payload, d.available_at, d.expires_at, p.created_at, p.ttl_seconds, p.title, d.user_id
                  FROM backfill_keys b JOIN push_requests p ON p.id = b.request_id
                  JOIN deliveries d ON d.request_id = p.id WHERE b.key = $1
                """, ["k\(n)"])
            let row = try #require(rows.first, "line \(n)")
            let body = try JSONParser.parse(lines[n - 1])
            let push = try PushRequestValidator.validate(
                .object(body.objectMembers!.filter { $0.key != "partner" && $0.key != "key" }), miniAppID: "bf.app",
                rules: rules, now: Date())
            let content = PushContent(request: push, partner: profile, publicURL: nil)
            let payload = PushTemplate(content, expiresAt: try row.date(3), signer: signer)
                .render(deliveryID: try row.uuid(0), recipient: try row.string(7), for: .apns)
            #expect(try row.string(1) == String(decoding: payload, as: UTF8.self), "line \(n)")
            let sent = try JSONParser.parse(row.string(1))
            #expect(sent["aps"]?["alert"]?["title"] == .string("[Backfill App] Title \(n)"))
            #expect(sent["kid"] == .string(BackfillDatabase.signingKeyID))
            #expect(try row.string(6) == "[Backfill App] Title \(n)")
            let ttl = n % 1_000 == 3 ? 600 : 3_600
            #expect(try row.int(5) == ttl)
            let due = n % 1_000 == 4 ? ISO8601.parse(soon)! : try row.date(4)
            #expect(abs(try row.date(2).timeIntervalSince(due)) < 0.01)
            #expect(abs(try row.date(3).timeIntervalSince(due) - Double(ttl)) < 0.01)
        }
        // The request reads as an API push does (GET .../push/{id} reads PushStore.find).
        let store = PushStore(pool: database.pool)
        let stranger = try #require(
            try database.query(
                "SELECT p.id, p.created_at FROM backfill_keys b JOIN push_requests p ON p.id = b.request_id WHERE b.key = 'k5'"
            ).first)
        let summaryRow = try #require(try store.find(requestID: stranger.uuid(0), createdAt: stranger.date(1)))
        #expect(summaryRow.recipients == 0 && summaryRow.deliveries == 0)
        #expect(try JSONParser.parse(summaryRow.missingJSON)["emails"] == .array([.string("stranger@example.com")]))
        let optedOut = try #require(
            try database.query(
                "SELECT p.id, p.created_at FROM backfill_keys b JOIN push_requests p ON p.id = b.request_id WHERE b.key = 'k7'"
            ).first)
        let optedOutSummary = try #require(try store.find(requestID: optedOut.uuid(0), createdAt: optedOut.date(1)))
        #expect(optedOutSummary.recipients == 1 && optedOutSummary.suppressed == 1 && optedOutSummary.deliveries == 0)

        // The same file again: every accepted line is a duplicate, the bad ones are reported again.
        let again = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(again.status == 0)
        let second = try again.json()
        #expect(second["accepted"] == .number(0))
        #expect(second["deliveries"] == .number(0))
        // Repeated keys follow their first line: written by the earlier run, they are duplicates too.
        let repeats = expected.values.filter { $0 == "duplicate_key" }.count
        #expect(second["duplicates"] == .number(Double(accepted + repeats)))
        #expect(second["rejected"]?.arrayValue?.count == expected.count - repeats)
        #expect(try database.count("SELECT count(*) FROM push_requests") == accepted)
        #expect(try database.count("SELECT count(*) FROM deliveries") == accepted - noDelivery)
    }

    @Test(
        "SIGINT mid-file: exit 1 with the committed counts, which the database holds exactly; a rerun finishes the rest once"
    )
    func interrupt() async throws {
        let database = try BackfillDatabase()
        database.environment = ["HERALD_BACKFILL_BATCH_SIZE": "200"]
        _ = try await database.run(["backfill", "users", try writeLines(Self.usersFile(500)).path])
        _ = try database.partner("bf.app", name: "Backfill App", tenant: Self.tenant)
        let total = 40_000
        let file = try writeLines((1...total).map { Self.send("k\($0)", email: "u\($0 % 500)@example.com") })
        defer { try? FileManager.default.removeItem(at: file) }

        let started = try database.start(["backfill", "sends", file.path, "--json"])
        try waitFor("400 lines committed", timeout: .seconds(60)) {
            try database.count("SELECT count(*) FROM backfill_keys") >= 400
        }
        kill(started.child.process.processIdentifier, SIGINT)
        let result = await database.finish(started)
        #expect(result.status == 1, "\(result.stderr)")
        let summary = try result.json()
        #expect(summary["interrupted"] == .bool(true))
        let accepted = Int(try #require(summary["accepted"]?.numberValue))
        #expect(accepted > 0 && accepted < total)
        #expect(summary["lines"] == .number(Double(accepted)))
        #expect(summary["deliveries"] == .number(Double(accepted)))
        #expect(try database.count("SELECT count(*) FROM backfill_keys") == accepted)
        #expect(try database.count("SELECT count(*) FROM push_requests") == accepted)
        #expect(try database.count("SELECT count(*) FROM deliveries") == accepted)
        #expect(result.stderr.contains("interrupted"))

        let rest = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(rest.status == 0)
        let second = try rest.json()
        #expect(second["accepted"] == .number(Double(total - accepted)))
        #expect(second["duplicates"] == .number(Double(accepted)))
        #expect(second["interrupted"] == nil)
        #expect(try database.count("SELECT count(*) FROM push_requests") == total)
        #expect(try database.count("SELECT count(*) FROM deliveries") == total)
    }

    @Test("two runs of one file at once create each line once")
    func concurrentRuns() async throws {
        let database = try BackfillDatabase()
        database.environment = ["HERALD_BACKFILL_BATCH_SIZE": "250"]
        _ = try await database.run(["backfill", "users", try writeLines(Self.usersFile(300)).path])
        _ = try database.partner("bf.app", name: "Backfill App", tenant: Self.tenant)
        let total = 8_000
        let file = try writeLines((1...total).map { Self.send("k\($0)", email: "u\($0 % 300)@example.com") })
        defer { try? FileManager.default.removeItem(at: file) }
        let first = try database.start(["backfill", "sends", file.path, "--json"])
        let second = try database.start(["backfill", "sends", file.path, "--json"])
        let results = [await database.finish(first), await database.finish(second)]
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        let summaries = try results.map { try $0.json() }
        let accepted = summaries.map { Int($0["accepted"]!.numberValue!) }.reduce(0, +)
        let duplicates = summaries.map { Int($0["duplicates"]!.numberValue!) }.reduce(0, +)
        #expect(accepted == total)
        #expect(duplicates == total)
        #expect(summaries.allSatisfy { $0["rejected"] == .array([]) })
        #expect(try database.count("SELECT count(*) FROM push_requests") == total)
        #expect(try database.count("SELECT count(*) FROM deliveries") == total)
    }

    @Test("users: the host API's rules (normalised identifiers, tenant moves, tokens taken), rejects, a rerun")
    func users() async throws {
        let database = try BackfillDatabase()
        let token = String(repeating: "ab", count: 32)
        func user(
            _ id: String, tenant: String = "t1", emails: [String] = [], wallets: [String] = [],
            devices: [JSONValue] = []
        ) -> String {
            json(
                .object([
                    ("userId", .string(id)), ("tenantId", .string(tenant)),
                    ("emails", .array(emails.map { .string($0) })), ("wallets", .array(wallets.map { .string($0) })),
                    ("devices", .array(devices)),
                ]))
        }
        func ios(_ id: String, _ token: String) -> JSONValue {
            .object([
                ("deviceId", .string(id)), ("platform", .string("ios")), ("environment", .string("sandbox")),
                ("apnsToken", .string(token)),
            ])
        }
        let wallet = "0x" + String(repeating: "AB", count: 20)
        let lines = [
            user(
                "alice", emails: ["Alice@Example.COM", "alice@example.com"], wallets: [wallet],
                devices: [ios("p1", token.uppercased())]),
            user(
                "bob", emails: ["bob@example.com"],
                devices: [
                    ios("p2", token),  // alice's token: the phone changed hands
                    .object([
                        ("deviceId", .string("a1")), ("platform", .string("android")),
                        ("environment", .string("production")),
                        ("fcmToken", .string("fcm-" + String(repeating: "z", count: 140))),
                    ]),
                ]),
            user("carol", emails: ["alice@example.com"]),  // alice's email in alice's tenant
            "{oops",
            json(.object([("tenantId", .string("t1"))])),
            user(
                "dave",
                devices: [
                    .object([
                        ("deviceId", .string("x")), ("platform", .string("ios")),
                        ("environment", .string("production")), ("fcmToken", .string("f")),
                    ])
                ]),
            user("erin", devices: [ios("e1", "nothex")]),
            json(.object([("userId", .string("frank")), ("tenantId", .string("t1")), ("nickname", .string("f"))])),
            user(
                "gina",
                devices: [ios("g1", String(repeating: "cd", count: 32)), ios("g1", String(repeating: "ef", count: 32))]),
            user("bob", tenant: "t2", emails: ["bob@example.com"]),  // bob moves tenant, his email follows
        ]
        let file = try writeLines(lines)
        let result = try await database.run(["backfill", "users", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try result.json()
        #expect(summary.objectMembers?.map(\.key) == ["lines", "users", "devices", "rejected"])
        #expect(summary["lines"] == .number(10))
        #expect(summary["users"] == .number(3))  // alice, bob, bob again
        #expect(summary["devices"] == .number(3))
        let rejected = try #require(summary["rejected"]?.arrayValue)
        #expect(rejected.map { Int($0["line"]!.numberValue!) } == [3, 4, 5, 6, 7, 8, 9])
        #expect(
            rejected.map { $0["code"]!.stringValue! } == [
                "identifier_taken", "invalid_json", "missing_field", "invalid_field", "invalid_field", "unknown_field",
                "invalid_field",
            ])
        #expect(rejected.allSatisfy { $0.objectMembers?.map(\.key) == ["line", "code", "message"] })

        #expect(
            try database.query("SELECT email FROM user_emails WHERE user_id = 'alice'").map { try $0.string(0) }
                == ["alice@example.com"])
        #expect(
            try database.query("SELECT wallet FROM user_wallets WHERE user_id = 'alice'").map { try $0.string(0) }
                == [wallet.lowercased()])
        #expect(try database.count("SELECT count(*) FROM devices WHERE user_id = 'alice' AND apns_token IS NULL") == 1)
        #expect(
            try database.count("SELECT count(*) FROM devices WHERE user_id = 'bob' AND apns_token = $1", [token]) == 1)
        #expect(
            try database.query("SELECT tenant_id FROM user_emails WHERE user_id = 'bob'").map { try $0.string(0) } == [
                "t2"
            ])
        #expect(
            try database.count("SELECT count(*) FROM users WHERE id IN ('carol', 'dave', 'erin', 'frank', 'gina')") == 0
        )

        let again = try await database.run(["backfill", "users", file.path, "--json"])
        #expect(try again.json() == summary)
        #expect(try database.count("SELECT count(*) FROM users") == 2)
        #expect(try database.count("SELECT count(*) FROM devices") == 3)
    }

    @Test("users: a device's push-to-start token per template is written as the host API writes it")
    func usersPushToStartTemplates() async throws {
        let database = try BackfillDatabase()
        let countdown = String(repeating: "c1", count: 32)
        let line =
            #"{"userId":"tina","tenantId":"t1","emails":["tina@example.com"],"devices":[{"deviceId":"p1","platform":"ios","environment":"production","apnsPushToStartToken":"\#(String(repeating: "a1", count: 32))","apnsPushToStartTokens":{"countdown":"\#(countdown.uppercased())"}}]}"#
        let bad =
            #"{"userId":"uma","tenantId":"t1","devices":[{"deviceId":"p1","platform":"ios","environment":"production","apnsPushToStartTokens":{"weather":"\#(countdown)"}}]}"#
        let result = try await database.run(["backfill", "users", try writeLines([line, bad]).path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let rejected = try #require(try result.json()["rejected"]?.arrayValue)
        #expect(rejected.map { $0["code"]?.stringValue } == ["unknown_field"])
        #expect(
            try database.query("SELECT template, token FROM device_push_to_start_tokens WHERE user_id = 'tina'")
                .map { "\(try $0.string(0)) \(try $0.string(1))" } == ["countdown \(countdown)"])
    }

    @Test(
        "sends: interruptionLevel by the push endpoint's rules and the partner's permission; the partner's sound and the mini-app's thread-id in aps"
    )
    func presentationKeys() async throws {
        let database = try BackfillDatabase()
        _ = try await database.run(["backfill", "users", try writeLines(Self.usersFile(3)).path])
        for arguments in [
            ["--mini-app-id", "bf.urgent", "--sound", "chime.caf", "--allow-time-sensitive"],
            ["--mini-app-id", "bf.plain"], ["--mini-app-id", "bf.quiet", "--silent"],
        ] {
            let created = try database.runQuick(
                ["partners", "create", "--display-name", "App", "--tenant", Self.tenant]
                    + arguments)
            #expect(created.status == 0, "\(created.stderr)")
        }
        let lines = [
            Self.send(
                "a", partner: "bf.urgent", email: "u0@example.com",
                extra: [("interruptionLevel", .string("time-sensitive"))]),
            Self.send(
                "b", partner: "bf.plain", email: "u0@example.com",
                extra: [("interruptionLevel", .string("time-sensitive"))]),
            Self.send(
                "c", partner: "bf.plain", email: "u1@example.com", extra: [("interruptionLevel", .string("critical"))]),
            Self.send(
                "d", partner: "bf.plain", email: "u1@example.com", extra: [("interruptionLevel", .string("passive"))]),
            Self.send(
                "e", partner: "bf.plain", email: "u2@example.com",
                extra: [("data", .object([("icon", .string("https://x.example/i.png"))]))]),
            Self.send("f", partner: "bf.quiet", email: "u2@example.com", extra: [("interruptionLevel", .null)]),
        ]
        let file = try writeLines(lines)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try result.json()
        #expect(summary["accepted"] == .number(3))
        let rejected = try #require(summary["rejected"]?.arrayValue).map {
            ($0["line"]?.numberValue ?? 0, $0["code"]?.stringValue ?? "")
        }
        #expect(rejected.map(\.0) == [2, 3, 5])
        #expect(rejected.map(\.1) == ["time_sensitive_not_allowed", "invalid_field", "invalid_field"])

        func aps(_ key: String) throws -> JSONValue? {
            let row = try #require(
                try database.query(
                    """
                    SELECT d.payload FROM backfill_keys b JOIN deliveries d ON d.request_id = b.request_id WHERE b.key = $1
                    """, [key]
                ).first, "key \(key)")
            return try JSONParser.parse(try row.string(0))["aps"]
        }
        let urgent = try aps("a")
        #expect(urgent?["thread-id"] == .string("bf.urgent"))
        #expect(urgent?["sound"] == .string("chime.caf"))
        #expect(urgent?["interruption-level"] == .string("time-sensitive"))
        let passive = try aps("d")
        #expect(passive?["thread-id"] == .string("bf.plain"))
        #expect(passive?["sound"] == .string("default"))
        #expect(passive?["interruption-level"] == .string("passive"))
        let quiet = try aps("f")
        #expect(quiet?["thread-id"] == .string("bf.quiet"))
        #expect(quiet?["sound"] == nil && quiet?["interruption-level"] == nil)
        #expect(try database.count("SELECT count(*) FROM backfill_keys") == 3)
    }

    @Test(
        "sends: a line's collapseKey gives its deliveries the push's collapse id, and a later line with the key supersedes an earlier one still queued"
    )
    func collapseKeys() async throws {
        let database = try BackfillDatabase()
        _ = try await database.run(["backfill", "users", try writeLines(Self.usersFile(2)).path])
        let created = try database.runQuick(
            ["partners", "create", "--display-name", "App", "--tenant", Self.tenant, "--mini-app-id", "bf.collapse"])
        #expect(created.status == 0, "\(created.stderr)")
        let key: [(key: String, value: JSONValue)] = [("collapseKey", .string("k"))]
        let file = try writeLines([
            Self.send("a", partner: "bf.collapse", email: "u0@example.com", extra: key),
            Self.send("b", partner: "bf.collapse", email: "u0@example.com", extra: key),
            Self.send("c", partner: "bf.collapse", email: "u1@example.com"),
        ])
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.json()["accepted"] == .number(3))
        let rows = try database.query(
            """
            SELECT b.key, coalesce(d.collapse_id, '-'), d.superseded_by IS NOT NULL, coalesce(p.collapse_key, '-')
              FROM backfill_keys b JOIN deliveries d ON d.request_id = b.request_id
              JOIN push_requests p ON p.id = b.request_id
             ORDER BY b.key
            """
        ).map { "\(try $0.string(0)) \(try $0.string(1)) \(try $0.string(2)) \(try $0.string(3))" }
        // SHA-256 of "bf.collapse\nk" (Migrations/functions/collapse_id.sql).
        let id = "9c8fd2dcad14a14cb4141b7fc0769653b590d796ffac6b1caab0200b78ea57b0"
        #expect(rows == ["a \(id) t k", "b \(id) f k", "c - f -"])
    }

    @Test("sends: each user gets the localized variant its locale matches; a users file keeps the locale")
    func localizedVariants() async throws {
        let database = try BackfillDatabase()
        let users = try writeLines(Self.usersFile(2))
        defer { try? FileManager.default.removeItem(at: users) }
        _ = try await database.run(["backfill", "users", users.path])
        _ = try database.query("UPDATE users SET locale = 'de' WHERE id = 'u0'")
        // A rerun of the users file (no locale field) leaves the user's as it is.
        let rerun = try await database.run(["backfill", "users", users.path])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(try database.count("SELECT count(*) FROM users WHERE id = 'u0' AND locale = 'de'") == 1)
        let created = try database.runQuick(
            ["partners", "create", "--display-name", "App", "--tenant", Self.tenant, "--mini-app-id", "bf.lang"])
        #expect(created.status == 0, "\(created.stderr)")
        let localized: [(key: String, value: JSONValue)] = [
            ("localized", .object([("de-DE", .object([("title", .string("Hallo"))]))]))
        ]
        let file = try writeLines([
            Self.send("a", partner: "bf.lang", email: "u0@example.com", extra: localized),
            Self.send("b", partner: "bf.lang", email: "u1@example.com", extra: localized),
        ])
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try result.json()["accepted"] == .number(2))
        let titles = try database.query(
            """
            SELECT b.key, d.payload FROM backfill_keys b JOIN deliveries d ON d.request_id = b.request_id ORDER BY b.key
            """
        ).map { row in
            "\(try row.string(0)) \(try JSONParser.parse(try row.string(1))["aps"]?["alert"]?["title"]?.stringValue ?? "-")"
        }
        // `de` takes no `de-DE` variant (lookup never widens a tag): only the exact tag or a shorter one matches.
        #expect(titles == ["a [App] Hello", "b [App] Hello"])
        _ = try database.query("UPDATE users SET locale = 'de-DE-1996' WHERE id = 'u0'")
        let again = try writeLines([Self.send("c", partner: "bf.lang", email: "u0@example.com", extra: localized)])
        defer { try? FileManager.default.removeItem(at: again) }
        #expect(try await database.run(["backfill", "sends", again.path]).status == 0)
        let payload = try #require(
            try database.query(
                "SELECT d.payload FROM backfill_keys b JOIN deliveries d ON d.request_id = b.request_id WHERE b.key = 'c'"
            ).first)
        #expect(try JSONParser.parse(try payload.string(0))["aps"]?["alert"]?["title"] == .string("[App] Hallo"))
    }

    @Test("the JSON shape of backfill sends, and progress lines on stderr when piped")
    func shapeAndProgress() async throws {
        let database = try BackfillDatabase()
        database.environment = ["HERALD_BACKFILL_BATCH_SIZE": "500"]
        _ = try await database.run(["backfill", "users", try writeLines(Self.usersFile(10)).path])
        _ = try database.partner("bf.app", name: "Backfill App", tenant: Self.tenant)
        let file = try writeLines((1...60_000).map { Self.send("k\($0)", email: "u\($0 % 10)@example.com") } + ["nope"])
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await database.run(["backfill", "sends", file.path, "--json"])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count == 1)
        let summary = try result.json()
        #expect(summary.objectMembers?.map(\.key) == ["lines", "accepted", "duplicates", "rejected", "deliveries"])
        #expect(
            summary["rejected"]
                == .array([
                    .object([
                        ("line", .number(60_001)), ("code", .string("invalid_json")),
                        ("message", .string("The line is not valid JSON: invalid literal at byte 0.")),
                    ])
                ]))
        // Not a terminal: whole lines (one at 50,000 lines, one at the end), no carriage returns.
        let progress = result.stderr.split(separator: "\n")
        #expect(!result.stderr.contains("\r"))
        #expect(progress.count >= 2)
        #expect(
            progress.allSatisfy { $0.hasPrefix("backfill sends: ") && $0.contains("lines/s") && $0.contains("ETA") })
        #expect(progress.last?.hasPrefix("backfill sends: 60001 lines, 100%") == true)

        // Text form when piped: tab-separated counts, then the rejected lines.
        let text = try await database.run(["backfill", "sends", file.path])
        #expect(text.stdout.contains("accepted\t0\nduplicates\t60000\n"))
        #expect(text.stdout.contains("60001\tinvalid_json\t"))
    }

    @Test("usage errors exit 2, a missing file or missing signing keys exit 1")
    func usage() async throws {
        let database = try BackfillDatabase()
        let file = try writeLines([])
        for arguments in [
            ["backfill"], ["backfill", "sends"], ["backfill", "users"], ["backfill", "resend", file.path],
            ["backfill", "sends", file.path, "--fast=yes"], ["backfill", "users", file.path, "--dry-run"],
            ["backfill", "sends", file.path, "extra"],
        ] {
            let result = try await database.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("usage: heraldctl backfill"), "\(arguments)")
        }
        // An option without its value: usage (the overview, as for every command).
        let noValue = try await database.run(["backfill", "sends", file.path, "--fast"])
        #expect(noValue.status == 2 && noValue.stderr.contains("--fast needs a value"))
        let missing = try await database.run(["backfill", "sends", "/nonexistent/file.jsonl", "--json"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot open /nonexistent/file.jsonl"))
        #expect(missing.stdout.isEmpty)
        let help = try await database.run(["backfill", "users", "--help"])
        #expect(help.status == 0 && help.stdout.contains("usage: heraldctl backfill users FILE"))
        database.environment = ["HERALD_SIGNING_KEYS": ""]
        let noKeys = try await database.run(["backfill", "sends", file.path])
        #expect(noKeys.status == 1 && noKeys.stderr.contains("HERALD_SIGNING_KEYS"))
        let empty = try await database.run(["backfill", "users", file.path, "--json"])
        #expect(
            try empty.json()
                == .object([
                    ("lines", .number(0)), ("users", .number(0)), ("devices", .number(0)),
                    ("rejected", .array([])),
                ]))
    }
}
