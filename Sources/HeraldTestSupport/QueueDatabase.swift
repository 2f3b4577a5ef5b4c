import Foundation
import HeraldCore
import Postgres
import Store

/// A private, migrated database per test (cloned from a template migrated once per process): a
/// claim takes due rows of every partner, so queue tests must not share a database.
public final class QueueDatabase: @unchecked Sendable {
    public let url: String
    public let name: String
    public let connection: PostgresConnection

    private static let template: String = {
        let name = "herald_worker_template_" + UUID().uuidString.prefix(8).lowercased()
        do {
            let admin = try PostgresConnection(url: TestEnvironment.databaseURL)
            try admin.execute("CREATE DATABASE \(name)")
            let migrator = try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
            let connection = try PostgresConnection(url: TestEnvironment.databaseURL(named: name))
            _ = try migrator.migrate(connection)
            try connection.execute("INSERT INTO tenants (id) VALUES ('t1')")
        } catch {
            fatalError("cannot build the worker test template: \(error)")
        }
        return name
    }()

    public init() throws {
        serverURL = TestEnvironment.databaseURL
        let template = Self.template
        let name = "herald_worker_" + UUID().uuidString.prefix(8).lowercased()
        self.name = name
        let admin = try PostgresConnection(url: TestEnvironment.databaseURL)
        // Two clones at once may see each other on the template: tried again shortly, the last error thrown.
        var failure: (any Error)?
        do {
            try waitFor("a clone of the template", timeout: .seconds(5), interval: .milliseconds(50)) {
                do {
                    try admin.execute("CREATE DATABASE \(name) TEMPLATE \(template)")
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        } catch {
            throw failure ?? error
        }
        url = TestEnvironment.databaseURL(named: name)
        connection = try PostgresConnection(url: url)
    }

    /// The server this database lives on (the suite's, or a private cluster's).
    private let serverURL: String

    /// A migrated database on another server (a private `PostgresCluster` a test stops and starts).
    public init(serverURL: String) throws {
        self.serverURL = serverURL
        name = "herald_worker_" + UUID().uuidString.prefix(8).lowercased()
        let admin = try PostgresConnection(url: serverURL)
        try admin.execute("CREATE DATABASE \(name)")
        url = TestEnvironment.databaseURL(named: name, on: serverURL)
        connection = try PostgresConnection(url: url)
        _ = try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql")).migrate(connection)
        try connection.execute("INSERT INTO tenants (id) VALUES ('t1')")
    }

    deinit {
        if let admin = try? PostgresConnection(url: serverURL) {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    // MARK: - Fixture rows

    /// A partner of tenant t1 with its own mini-app.
    @discardableResult
    public func partner(miniApp: String = "app.\(UUID().uuidString.prefix(6).lowercased())", keyHash: String? = nil)
        throws -> (id: UUID, miniApp: String)
    {
        let id = UUID()
        try connection.query(
            """
            INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                                  rate_limit_per_day)
            VALUES ($1, $2, 'Partner', 't1', $3, 60, 10000)
            """, [id, miniApp, keyHash ?? UUID().uuidString])
        return (id, miniApp)
    }

    /// A user with one iOS device (APNs token) and one Android device (FCM token).
    public func user(
        _ id: String, apnsToken: String? = nil, fcmToken: String? = nil, environment: String = "sandbox",
        bundleID: String? = nil
    ) throws {
        try connection.query("INSERT INTO users (id, tenant_id) VALUES ($1, 't1') ON CONFLICT DO NOTHING", [id])
        if let apnsToken {
            try connection.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, apns_token, bundle_id)
                VALUES ($1, 'iphone', 'ios', $2, $3, $4)
                """, [id, environment, apnsToken, bundleID])
        }
        if let fcmToken {
            try connection.query(
                """
                INSERT INTO devices (user_id, device_id, platform, environment, fcm_token)
                VALUES ($1, 'pixel', 'android', 'production', $2)
                """, [id, fcmToken])
        }
    }

    /// Makes `email` an identifier of user `id` (tenant t1), so pushes can address the user.
    public func email(_ email: String, user id: String) throws {
        try connection.query("INSERT INTO user_emails (tenant_id, email, user_id) VALUES ('t1', $1, $2)", [email, id])
    }

    /// A push request's audit row with `deliveries` expected deliveries.
    public func request(partner: UUID, deliveries: Int) throws -> (id: UUID, createdAt: Date) {
        let now = Date()
        let id = UUIDv7.make(at: now)
        let createdAt = UUIDv7.timestamp(of: id)!
        try connection.query(
            """
            INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, title, body, data, lane, recipients,
                                       deliveries, suppressed, missing)
            VALUES ($1, $2, $3, 'app', 'T', 'B', '{}', 0, 1, $4, 0, '{}')
            """, [id, createdAt, partner, deliveries])
        return (id, createdAt)
    }

    /// Queues one delivery of `request` to `user`'s device for `service`.
    @discardableResult
    public func delivery(
        request: (id: UUID, createdAt: Date), partner: UUID, user: String, service: PushService,
        lane: Int = 0, availableAt: Date? = nil, expiresAt: Date? = nil, payload: String? = nil
    ) throws -> UUID {
        let id = UUID()
        let body =
            payload
            ?? (service == .apns
                ? #"{"aps":{"alert":{"title":"T","body":"B"}},"deliveryId":"\#(id.uuidString.lowercased())"}"#
                : #"{"android":{"priority":"HIGH"},"data":{"title":"T","deliveryId":"\#(id.uuidString.lowercased())"}}"#)
        try connection.query(
            """
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                    environment, payload, available_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, coalesce($11, now()), $12)
            """,
            [
                id, request.id, request.createdAt, partner, lane, service.rawValue, user,
                service == .apns ? "iphone" : "pixel", service == .apns ? "sandbox" : "production", body,
                availableAt, expiresAt,
            ])
        return id
    }

    /// A push request of one delivery per (user, service), written by the intake's own statement
    /// (PushStore.enqueue): 16 or more to one service and environment become group rows
    /// (sql/016_delivery_groups.sql). Devices as `user` makes them; returns the delivery ids in order.
    public func enqueueRequest(
        partner: (id: UUID, miniApp: String), deliveries: [(user: String, service: PushService)],
        expiresAt: Date? = nil
    ) throws -> (request: (id: UUID, createdAt: Date), ids: [UUID]) {
        let now = Date()
        let request = OutboxWrite.newRequest(at: now)
        let rows: [OutboxWrite.Delivery] = deliveries.map { delivery in
            let id = UUIDv7.make(at: now)
            let text = id.uuidString.lowercased()
            return delivery.service == .apns
                ? .init(
                    id: id, service: .apns, userID: delivery.user, deviceID: "iphone", environment: "sandbox",
                    payload: #"{"aps":{"alert":{"title":"T","body":"B"}},"deliveryId":"\#(text)"}"#)
                : .init(
                    id: id, service: .fcm, userID: delivery.user, deviceID: "pixel", environment: "production",
                    payload: #"{"android":{"priority":"HIGH"},"data":{"title":"T","deliveryId":"\#(text)"}}"#)
        }
        // The TTL that expires the rows at `expiresAt` (an hour from now without it), counted from the request's
        // creation as the writer counts it.
        let ttlSeconds = expiresAt.map { Int($0.timeIntervalSince(request.createdAt).rounded()) } ?? 3600
        let push = OutboxWrite(
            requestID: request.id, createdAt: request.createdAt, partnerID: partner.id, miniAppID: partner.miniApp,
            title: "T", body: "B", deepLink: nil, sendAt: nil, ttlSeconds: ttlSeconds, interruptionLevel: nil,
            deliveries: rows,
            resolved: .init(
                response: "{}", recipients: Set(deliveries.map(\.user)).count, suppressed: 0,
                missingJSON: #"{"emails":[],"wallets":[]}"#,
                senderUserIDs: Array(Set(deliveries.map(\.user)))))
        let pool = PostgresPool(configuration: .init(url: url, maxConnections: 1))
        guard try PushStore(pool: pool).enqueue(push) else {
            throw PostgresError(code: .queryFailed, serverMessage: "not written")
        }
        return ((request.id, request.createdAt), rows.map(\.id))
    }

    /// Bulk-queues `count` APNs deliveries for one user (one statement).
    public func deliveries(count: Int, request: (id: UUID, createdAt: Date), partner: UUID, user: String, lane: Int = 0)
        throws
    {
        try connection.query(
            """
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                    environment, payload, available_at)
            SELECT gen_random_uuid(), $1, $2, $3, $4, 'apns', $5, 'iphone', 'sandbox',
                   '{"aps":{"alert":{"title":"T","body":"B"}}}', now() - interval '1 second' + g * interval '1 microsecond'
              FROM generate_series(1, $6) g
            """, [request.id, request.createdAt, partner, lane, user, count])
    }

    public func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try connection.query(sql, parameters).first!.int(0)
    }

    /// The outcome recorded in history for one delivery.
    public func outcome(of id: UUID) throws -> (outcome: String, attempts: Int, error: String?)? {
        try connection.query(
            "SELECT outcome, attempts, last_error FROM delivery_history_deliveries WHERE id = $1",
            [id]
        ).first
            .map { (try $0.string("outcome"), try $0.int("attempts"), try $0.optionalString("last_error")) }
    }

    /// sent and failed of a request's audit row.
    public func counts(of request: (id: UUID, createdAt: Date)) throws -> (sent: Int, failed: Int) {
        let row = try connection.query(
            "SELECT sent, failed FROM push_requests WHERE id = $1 AND created_at = $2",
            [request.id, request.createdAt]
        ).first!
        return (try row.int("sent"), try row.int("failed"))
    }
}
