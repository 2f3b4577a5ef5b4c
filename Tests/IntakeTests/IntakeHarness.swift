import Foundation
import HeraldCore
import HeraldCrypto
import HeraldTestSupport
import Postgres
import Store

@testable import Intake

/// The schema is migrated once per test process, before any intake starts.
let migratedDatabase: PostgresPool = {
    let pool = PostgresPool(configuration: .init(url: TestEnvironment.databaseURL, maxConnections: 8))
    do {
        let migrator = try Migrator.load(from: TestEnvironment.repositoryRoot.appendingPathComponent("sql"))
        try pool.withConnection { try migrator.migrate($0) }
    } catch {
        fatalError("cannot migrate the test database: \(error)")
    }
    return pool
}()

/// An intake running in this process on a free port, with known tokens and signing key.
final class IntakeHarness: Sendable {
    static let adminToken = "test-admin-token-0123456789"
    static let hostToken = "test-host-token-0123456789"
    static let signingKey: [UInt8] = Array(repeating: 7, count: 32)
    static let signingKeyID = "test1"
    /// HERALD_PUBLIC_URL of the test intakes: payloads' imageUrl starts with it.
    static let publicURL = "https://herald.test"

    /// The intake most tests share.
    static let shared: IntakeHarness = {
        do { return try IntakeHarness() } catch { fatalError("cannot start the test intake: \(error)") }
    }()

    let server: IntakeServer
    let port: UInt16
    /// The port of `/metrics` (HERALD_INTAKE_METRICS_PORT), a free one picked at start.
    var metricsPort: UInt16 { server.metricsPort }

    init(configure: (inout IntakeConfiguration) -> Void = { _ in }, clock: @escaping @Sendable () -> Date = { Date() })
        throws
    {
        _ = migratedDatabase
        var configuration = IntakeConfiguration(
            databaseURL: TestEnvironment.databaseURL, adminToken: Self.adminToken, hostToken: Self.hostToken,
            signingKeys: [Self.signingKeyID: Self.signingKey, "old": Array(repeating: 9, count: 32)],
            signingKeyID: Self.signingKeyID)
        configuration.port = 0
        configuration.metricsPort = 0
        configuration.threads = 8
        configuration.databasePoolSize = 8
        configuration.logLevel = .error
        configuration.rules.publicURL = Self.publicURL
        configure(&configuration)
        server = try IntakeServer(configuration: configuration, clock: clock)
        port = try server.start()
    }

    func stop() { server.stop() }

    /// `GET /metrics` on the metrics port.
    func scrapeMetrics() throws -> TestHTTPClient.Response {
        try TestHTTPClient.send(port: metricsPort, method: "GET", path: "/metrics")
    }

    // MARK: requests

    func request(
        _ method: String, _ path: String, token: String?, json: String? = nil,
        headers: [(String, String)] = []
    ) throws -> TestHTTPClient.Response {
        try TestHTTPClient.json(port: port, method: method, path: path, token: token, json: json, headers: headers)
    }

    /// A request with any body and content type (an icon upload).
    func raw(_ method: String, _ path: String, token: String?, type: String, body: [UInt8]) throws
        -> TestHTTPClient.Response
    {
        var headers = [("Content-Type", type)]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try TestHTTPClient.send(port: port, method: method, path: path, headers: headers, body: body)
    }

    func admin(_ method: String, _ path: String, _ json: String? = nil) throws -> TestHTTPClient.Response {
        try request(method, path, token: Self.adminToken, json: json)
    }

    func host(_ method: String, _ path: String, _ json: String? = nil) throws -> TestHTTPClient.Response {
        try request(method, path, token: Self.hostToken, json: json)
    }

    func push(_ key: String, _ json: String, idempotencyKey: String? = nil) throws -> TestHTTPClient.Response {
        var headers: [(String, String)] = []
        if let idempotencyKey { headers.append(("Idempotency-Key", idempotencyKey)) }
        return try request("POST", "/api/partners/notifications/push", token: key, json: json, headers: headers)
    }
}

/// A partner created through the admin API.
struct TestPartner: Sendable {
    let id: String
    let key: String
    let miniAppID: String
    let tenantID: String
    let displayName: String

    var deepLinkRoot: String { "basedapp://miniapp/\(miniAppID)" }
}

/// A user created through the host API.
struct TestUser: Sendable {
    let id: String
    let email: String
    let wallet: String
    let apnsToken: String
    let fcmToken: String
}

extension IntakeHarness {
    /// `extra`: more admin fields (`sound`, `allowTimeSensitive`).
    func makePartner(
        tenant: String? = nil, perMinute: Int = 1_000, perDay: Int = 100_000,
        displayName: String = "Pull", iconURL: String? = nil,
        extra: [(key: String, value: JSONValue)] = []
    ) throws
        -> TestPartner
    {
        let tenantID = tenant ?? TestEnvironment.unique("tenant")
        let miniAppID = TestEnvironment.unique("app").replacingOccurrences(of: "-", with: ".")
        var body: [(key: String, value: JSONValue)] = [
            ("miniAppId", .string(miniAppID)), ("displayName", .string(displayName)), ("tenantId", .string(tenantID)),
            ("rateLimitPerMinute", .number(Double(perMinute))), ("rateLimitPerDay", .number(Double(perDay))),
        ]
        if let iconURL { body.append(("iconUrl", .string(iconURL))) }
        body += extra
        let response = try admin("POST", "/api/admin/mini-app-partners", JSONWriter.string(.object(body)))
        guard response.status == 201, let json = try? JSONParser.parse(response.body),
            let id = json["id"]?.stringValue, let key = json["apiKey"]?.stringValue
        else { throw TestHTTPClient.Failure(description: "create partner: \(response.status) \(response.text)") }
        return TestPartner(id: id, key: key, miniAppID: miniAppID, tenantID: tenantID, displayName: displayName)
    }

    /// A user with an iOS and an Android device (either can be left out).
    /// `tablet` adds an iPad: three devices, more than the intake renders up front (the two-round-trip path).
    func makeUser(tenant: String, ios: Bool = true, android: Bool = true, tablet: Bool = false) throws -> TestUser {
        let id = TestEnvironment.unique("user")
        let user = TestUser(
            id: id, email: "\(id)@Example.com",
            wallet: "0x" + Digest.hex(try SecureRandom.bytes(20)).uppercased(),
            apnsToken: Digest.hex(try SecureRandom.bytes(32)),
            fcmToken: "fcm_" + Digest.hex(try SecureRandom.bytes(40)) + ":APA91b")
        let created = try host(
            "PUT", "/api/internal/users/\(id)",
            #"{"tenantId":"\#(tenant)","emails":["\#(user.email)"],"wallets":["\#(user.wallet)"]}"#)
        guard created.status == 201 else { throw TestHTTPClient.Failure(description: "create user: \(created.text)") }
        if ios {
            let device = try host(
                "PUT", "/api/internal/users/\(id)/devices/iphone",
                #"{"platform":"ios","environment":"production","apnsToken":"\#(user.apnsToken)","bundleId":"one.based.app"}"#
            )
            guard device.status == 201 else { throw TestHTTPClient.Failure(description: "ios device: \(device.text)") }
        }
        if tablet {
            let device = try host(
                "PUT", "/api/internal/users/\(id)/devices/ipad",
                #"{"platform":"ios","environment":"production","apnsToken":"\#(Digest.hex(try SecureRandom.bytes(32)))","bundleId":"one.based.app"}"#
            )
            guard device.status == 201 else { throw TestHTTPClient.Failure(description: "ipad device: \(device.text)") }
        }
        if android {
            let device = try host(
                "PUT", "/api/internal/users/\(id)/devices/pixel",
                #"{"platform":"android","environment":"production","fcmToken":"\#(user.fcmToken)"}"#)
            guard device.status == 201 else {
                throw TestHTTPClient.Failure(description: "android device: \(device.text)")
            }
        }
        return user
    }
}

/// A small push body to `emails` / `wallets` for `partner`.
func pushBody(
    _ partner: TestPartner, emails: [String] = [], wallets: [String] = [], title: String = "Deposit pending",
    extra: String = ""
) -> String {
    let emailList = emails.map { "\"\($0)\"" }.joined(separator: ",")
    let walletList = wallets.map { "\"\($0)\"" }.joined(separator: ",")
    return
        #"{"recipients":{"emails":[\#(emailList)],"wallets":[\#(walletList)]},"title":"\#(title)","body":"Confirmations: 1/6","deepLink":"\#(partner.deepLinkRoot)/deposits/0xabc","data":{"txHash":"0x123"}\#(extra)}"#
}

/// SQL assertions on the test database.
enum DB {
    static func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try migratedDatabase.withConnection { try $0.query(sql, parameters).first!.int(0) }
    }

    static func rows(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> [PostgresRow] {
        try migratedDatabase.withConnection { try $0.query(sql, parameters).rows }
    }

    static func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws {
        _ = try migratedDatabase.withConnection { try $0.query(sql, parameters) }
    }

    /// Rows written anywhere for a partner: what a rejected request must leave at zero.
    static func writes(partnerID: String) throws -> Int {
        try count(
            """
            SELECT (SELECT count(*) FROM push_requests WHERE partner_id = $1::uuid)
                 + (SELECT count(*) FROM deliveries WHERE partner_id = $1::uuid)
                 + (SELECT count(*) FROM idempotency_keys WHERE partner_id = $1::uuid)
            """, [partnerID])
    }
}

extension TestHTTPClient.Response {
    var json: JSONValue { (try? JSONParser.parse(body)) ?? .null }
    var errorCode: String? { json["error"]?["code"]?.stringValue }
    var errorField: String? { json["error"]?["field"]?.stringValue }
}
