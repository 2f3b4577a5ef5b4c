import Foundation
import HeraldTestSupport
import Postgres
import Store
import Synchronization
import Testing

@testable import HeraldCore

/// sql/007_edges.sql against real Postgres, each test in its own database (a claim takes the due
/// rows of every partner): a device token belongs to one device, and emails are stored and looked
/// up in NFC.
@Suite struct DirectoryEdgesTests {
    static let token = String(repeating: "5e", count: 32)

    static func ios(_ token: String) -> DeviceRegistration {
        DeviceRegistration(
            platform: "ios", environment: "sandbox", bundleID: nil, apnsToken: token,
            apnsPushToStartToken: nil, fcmToken: nil)
    }

    static func directory(_ db: QueueDatabase, connections: Int = 4) -> DirectoryStore {
        DirectoryStore(pool: PostgresPool(configuration: .init(url: db.url, maxConnections: connections)))
    }

    @Test func registeringATokenTakesItFromTheRowThatHeldItInAnyTenant() throws {
        let db = try QueueDatabase()
        try db.connection.query("INSERT INTO tenants (id) VALUES ('t2')")
        try db.connection.query("INSERT INTO users (id, tenant_id) VALUES ('old', 't1'), ('new', 't2')")
        let directory = Self.directory(db)
        #expect(
            try directory.putDeviceTakingTokens(userID: "old", deviceID: "iphone", Self.ios(Self.token)) == (true, 0))
        let fcm = "fcm_" + String(repeating: "z", count: 40)
        let pushToStart = String(repeating: "a1", count: 32)
        _ = try directory.putDevice(
            userID: "old", deviceID: "pixel",
            DeviceRegistration(
                platform: "android", environment: "production", bundleID: nil, apnsToken: nil,
                apnsPushToStartToken: nil,
                fcmToken: fcm))
        _ = try directory.putDevice(
            userID: "old", deviceID: "ipad",
            DeviceRegistration(
                platform: "ios", environment: "production", bundleID: nil, apnsToken: nil,
                apnsPushToStartToken: pushToStart, fcmToken: nil))

        // The phone now belongs to another user of another tenant.
        #expect(
            try directory.putDeviceTakingTokens(userID: "new", deviceID: "phone", Self.ios(Self.token)) == (true, 1))
        _ = try directory.putDevice(
            userID: "new", deviceID: "pixel",
            DeviceRegistration(
                platform: "android", environment: "production", bundleID: nil, apnsToken: nil,
                apnsPushToStartToken: nil,
                fcmToken: fcm))
        _ = try directory.putDevice(
            userID: "new", deviceID: "ipad",
            DeviceRegistration(
                platform: "ios", environment: "production", bundleID: nil, apnsToken: nil,
                apnsPushToStartToken: pushToStart, fcmToken: nil))

        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token = $1", [Self.token]) == 1)
        #expect(
            try db.count("SELECT count(*) FROM devices WHERE apns_token = $1 AND user_id = 'new'", [Self.token]) == 1)
        #expect(try db.count("SELECT count(*) FROM devices WHERE fcm_token = $1 AND user_id = 'new'", [fcm]) == 1)
        #expect(try db.count("SELECT count(*) FROM devices WHERE fcm_token = $1", [fcm]) == 1)
        #expect(try db.count("SELECT count(*) FROM devices WHERE apns_push_to_start_token = $1", [pushToStart]) == 1)
        #expect(
            try db.count(
                """
                SELECT count(*) FROM devices WHERE user_id = 'old'
                   AND apns_token IS NULL AND fcm_token IS NULL AND apns_push_to_start_token IS NULL
                """) == 3)
        // Re-registering the holder's own token takes nothing.
        #expect(
            try directory.putDeviceTakingTokens(userID: "new", deviceID: "phone", Self.ios(Self.token)) == (false, 0))
    }

    @Test func aDeliveryQueuedForTheOldOwnerIsNeverSentToTheNewOwnersPhone() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        try db.connection.query("INSERT INTO users (id, tenant_id) VALUES ('old', 't1'), ('new', 't1')")
        let directory = Self.directory(db)
        _ = try directory.putDevice(userID: "old", deviceID: "iphone", Self.ios(Self.token))
        let request = try db.request(partner: partner.id, deliveries: 1)
        let queued = try db.delivery(request: request, partner: partner.id, user: "old", service: .apns)

        _ = try directory.putDevice(userID: "new", deviceID: "iphone", Self.ios(Self.token))

        let claimed = try DeliveryStore().claim(
            on: db.connection, worker: "w1", limit: 10, leaseSeconds: 30,
            services: [.apns])
        #expect(claimed.map(\.id) == [queued])
        // The claim reads the token of the delivery's own device row: gone, so nothing is sent.
        #expect(claimed.first?.token == nil)
        #expect(claimed.first?.verdict == .tokenInvalid)
        // And new pushes to the old user resolve no device.
        try db.email("old@example.com", user: "old")
        let resolved = try db.connection
            .query(Queries.PushRequests.resolve.text, ["t1", ["old@example.com"], [String](), "x"])
            .rows.map { "\(try $0.string("kind")) \(try $0.string("user_id"))" }
        #expect(resolved.sorted() == ["e old", "u old"])
    }

    @Test func concurrentRegistrationsOfOneTokenLeaveExactlyOneHolder() throws {
        let db = try QueueDatabase()
        let users = (0..<8).map { "u\($0)" }
        for user in users { try db.connection.query("INSERT INTO users (id, tenant_id) VALUES ($1, 't1')", [user]) }
        let directory = Self.directory(db, connections: users.count)
        for round in 0..<5 {
            let token = String(format: "%064x", round + 1)
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: users.count) { index in
                do {
                    _ = try directory.putDevice(userID: users[index], deviceID: "iphone", Self.ios(token))
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
            #expect(try db.count("SELECT count(*) FROM devices WHERE apns_token = $1", [token]) == 1, "round \(round)")
        }
    }

    @Test func emailsAreStoredAndLookedUpInNFC() throws {
        let db = try QueueDatabase()
        try db.connection.query("INSERT INTO users (id, tenant_id) VALUES ('u1', 't1'), ('u2', 't1')")
        let decomposed = "re\u{301}my@example.com"
        let composed = "r\u{E9}my@example.com"
        // A writer that did not normalise (an older intake, a script) still stores the NFC form.
        try db.email(decomposed, user: "u1")
        #expect(
            try db.connection.query("SELECT email FROM user_emails WHERE user_id = 'u1'").first!.string(0)
                .utf8.elementsEqual(composed.utf8))
        // Either form sent by a partner resolves to it, also behind an email already in NFC.
        for forms in [[composed], [decomposed], ["nobody@example.com", decomposed]] {
            let matched = try db.connection
                .query(Queries.PushRequests.resolve.text, ["t1", forms, [String](), "x"]).rows
                .filter { try $0.string("kind") == "e" }
            #expect(try matched.map { try $0.string("user_id") } == ["u1"])
            #expect(try matched.allSatisfy { try $0.string("ident").utf8.elementsEqual(composed.utf8) })
        }
        // The same address in the other form is the same identifier: another user cannot hold it.
        #expect(throws: PostgresError.self) { try db.email(composed, user: "u2") }
    }

    @Test func anOutboxRowWithAnUnknownEnvironmentIsRefused() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let request = try db.request(partner: partner.id, deliveries: 1)
        #expect(throws: PostgresError.self) {
            try db.connection.query(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, service, user_id, device_id,
                                        environment, payload, available_at)
                VALUES (gen_random_uuid(), $1, $2, $3, 'apns', 'u', 'd', 'staging', '{}', now())
                """, [request.id, request.createdAt, partner.id])
        }
        try db.connection.query("INSERT INTO users (id, tenant_id) VALUES ('u', 't1')")
        #expect(throws: PostgresError.self) {
            try db.connection.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment) VALUES ('u', 'd', 'ios', 'Production')
                """)
        }
        try db.connection.query(
            "INSERT INTO devices (user_id, device_id, platform, environment) VALUES ('u', 'd', 'ios', 'sandbox')")
    }

    @Test("each enumerated outbox column refuses a value outside its domain, inserted or updated")
    func outboxDomainsRefuseUnknownValues() throws {
        let db = try QueueDatabase()
        let partner = try db.partner()
        let request = try db.request(partner: partner.id, deliveries: 1)
        let id = UUID()
        try db.connection.query(
            """
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, service, user_id, device_id,
                                    environment, payload, available_at)
            VALUES ($1, $2, $3, $4, 'apns', 'u', 'd', 'production', '{}', now())
            """, [id, request.id, request.createdAt, partner.id])
        for (column, value) in [
            ("state", "sent"), ("service", "webpush"), ("environment", "staging"),
            ("activity_event", "pause"),
        ] {
            do {
                try db.connection.query("UPDATE deliveries SET \(column) = $2 WHERE id = $1", [id, value])
                Issue.record("\(column) = \(value) was accepted")
            } catch let error as PostgresError {
                #expect(error.sqlState == "23514", "\(column): \(error)")  // check_violation
            }
        }
        do {
            try db.connection.query(
                """
                INSERT INTO deliveries (id, request_id, request_created_at, partner_id, state, service, user_id,
                                        device_id, environment, payload, available_at)
                VALUES (gen_random_uuid(), $1, $2, $3, 'done', 'apns', 'u', 'd', 'production', '{}', now())
                """, [request.id, request.createdAt, partner.id])
            Issue.record("state = done was inserted")
        } catch let error as PostgresError {
            #expect(error.sqlState == "23514", "\(error)")
        }
        #expect(
            try db.connection.query(
                "UPDATE deliveries SET state = 'leased', activity_event = NULL WHERE id = $1",
                [id]
            ).affectedRows == 1)
    }

    @Test func migration007LeavesEachSharedTokenWithTheLatestRowAndNormalisesStoredEmails() throws {
        let name = "herald_edges_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try PostgresConnection(url: TestEnvironment.databaseURL)
        try admin.execute("CREATE DATABASE \(name)")
        defer { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        let connection = try PostgresConnection(url: TestEnvironment.databaseURL(named: name))
        let all = try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
        _ = try Migrator(migrations: all.migrations.filter { $0.version < 7 }).migrate(connection)
        try connection.execute(
            """
            INSERT INTO tenants (id) VALUES ('t1');
            INSERT INTO users (id, tenant_id) VALUES ('a', 't1'), ('b', 't1'), ('c', 't1');
            INSERT INTO devices (user_id, device_id, platform, environment, apns_token, updated_at) VALUES
                ('a', 'd', 'ios', 'production', '\(Self.token)', now() - interval '2 days'),
                ('b', 'd', 'ios', 'production', '\(Self.token)', now() - interval '1 day');
            INSERT INTO user_emails (tenant_id, email, user_id) VALUES
                ('t1', 're\u{301}my@example.com', 'a'), ('t1', 'r\u{E9}my@example.com', 'b'),
                ('t1', 'jose\u{301}@example.com', 'c');
            """)
        _ = try all.migrate(connection)
        #expect(
            try connection.query("SELECT user_id FROM devices WHERE apns_token IS NOT NULL").rows
                .map { try $0.string(0) } == ["b"])
        let emails = try connection.query("SELECT email, user_id FROM user_emails ORDER BY user_id").rows
            .map { (Array(try $0.string(0).utf8), try $0.string(1)) }
        // The twin already in NFC is kept; the other form is merged into it.
        #expect(emails.map(\.1) == ["b", "c"])
        #expect(emails.map(\.0) == [Array("r\u{E9}my@example.com".utf8), Array("jos\u{E9}@example.com".utf8)])
    }
}
