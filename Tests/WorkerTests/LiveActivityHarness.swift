import Foundation
import HeraldCore
import HeraldTestSupport
import Simulator
import Store
import Worker

@testable import Intake

/// Live Activities end to end: an intake in this process writing to a private database, the
/// simulator over TLS, and workers sending to it (WorkerHarness). Partners, users, devices and
/// sessions are made through the intake's own admin and host APIs.
final class LiveActivityHarness: @unchecked Sendable {
    static let adminToken = "test-admin-token-0123456789"
    static let hostToken = "test-host-token-0123456789"
    static let signingKey: [UInt8] = Array(repeating: 7, count: 32)

    let workers: WorkerHarness
    let intake: IntakeServer
    let port: UInt16
    var db: QueueDatabase { workers.db }
    var simulator: Simulator { workers.simulator }

    /// `clock`: the intake's time (a test of scheduled starts runs it behind the database's, as the workers').
    init(clock: (any HeraldClock)? = nil, configure: (inout IntakeConfiguration) -> Void = { _ in }) throws {
        workers = try WorkerHarness()
        var configuration = IntakeConfiguration(
            databaseURL: workers.db.url, adminToken: Self.adminToken, hostToken: Self.hostToken,
            signingKeys: ["k1": Self.signingKey], signingKeyID: "k1")
        configuration.port = 0
        configuration.metricsPort = 0
        configuration.threads = 8
        configuration.databasePoolSize = 8
        configuration.defaultTenant = "t1"
        configuration.logLevel = .error
        configure(&configuration)
        intake = try IntakeServer(configuration: configuration, clock: { clock?.now ?? Date() })
        port = try intake.start()
    }

    deinit { intake.stop() }

    // MARK: - Requests

    func request(
        _ method: String, _ path: String, token: String?, json: String? = nil,
        headers: [(String, String)] = []
    ) throws -> TestHTTPClient.Response {
        try TestHTTPClient.json(port: port, method: method, path: path, token: token, json: json, headers: headers)
    }

    func host(_ method: String, _ path: String, _ json: String? = nil) throws -> TestHTTPClient.Response {
        try request(method, path, token: Self.hostToken, json: json)
    }

    struct Partner {
        let id: String
        let miniApp: String
        let apiKey: String
        let displayName: String
    }

    /// A partner of tenant t1 made through the admin API; `extra` adds admin fields (`,"sound":null`).
    func partner(
        displayName: String = "Pull", perMinute: Int = 10_000, perDay: Int = 1_000_000,
        extra: String = ""
    ) throws -> Partner {
        let miniApp = "fun.pull.\(UUID().uuidString.prefix(6).lowercased())"
        let response = try request(
            "POST", "/api/admin/mini-app-partners", token: Self.adminToken,
            json: """
                {"miniAppId":"\(miniApp)","displayName":"\(displayName)","tenantId":"t1",
                 "rateLimitPerMinute":\(perMinute),"rateLimitPerDay":\(perDay)\(extra)}
                """)
        guard response.status == 201, let json = try? JSONParser.parse(response.body),
            let id = json["id"]?.stringValue, let key = json["apiKey"]?.stringValue
        else { throw TestHTTPClient.Failure(description: "partner: \(response.status) \(response.text)") }
        return Partner(id: id, miniApp: miniApp, apiKey: key, displayName: displayName)
    }

    struct User {
        let id: String
        let email: String
        /// The iPhone's push-to-start token, if it has an iPhone.
        let pushToStartToken: String?
        let fcmToken: String?
    }

    /// A user of tenant t1 with an iPhone (push-to-start token, the test topic's bundle) and/or a Pixel,
    /// and a session with `sessionWith` mini-apps, all through the host API.
    func user(iphone: Bool = true, pixel: Bool = true, sessionWith miniApps: [String] = []) throws -> User {
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let id = "user-\(suffix)"
        let email = "\(id)@example.com"
        try expect(host("PUT", "/api/internal/users/\(id)", #"{"tenantId":"t1","emails":["\#(email)"]}"#), [200, 201])
        var pushToStart: String?
        var fcm: String?
        if iphone {
            pushToStart = Self.hexToken()
            try expect(
                host(
                    "PUT", "/api/internal/users/\(id)/devices/iphone",
                    """
                    {"platform":"ios","environment":"sandbox","apnsToken":"\(Self.hexToken())",
                     "apnsPushToStartToken":"\(pushToStart!)","bundleId":"\(workers.credentials.apnsTopic)"}
                    """), [200, 201])
        }
        if pixel {
            fcm = "fcm-\(suffix)-" + String(repeating: "a", count: 40)
            try expect(
                host(
                    "PUT", "/api/internal/users/\(id)/devices/pixel",
                    """
                    {"platform":"android","environment":"production","fcmToken":"\(fcm!)"}
                    """), [200, 201])
        }
        for miniApp in miniApps {
            try expect(host("PUT", "/api/internal/users/\(id)/mini-app-sessions/\(miniApp)"), [200, 201, 204])
        }
        return User(id: id, email: email, pushToStartToken: pushToStart, fcmToken: fcm)
    }

    /// 64 hex digits, unique.
    static func hexToken(bytes: Int = 32) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    func start(
        _ partner: Partner, _ user: User, template: String = "progress", attributes: String? = nil,
        state: String? = nil, ttlSeconds: Int? = nil, alert: String? = nil, relevanceScore: Int? = nil,
        idempotencyKey: String? = nil, port: UInt16? = nil, startAt: Date? = nil
    ) throws -> TestHTTPClient.Response {
        var body = #"{"recipient":{"email":"\#(user.email)"},"template":"\#(template)""#
        if let startAt { body += #","startAt":"\#(ISO8601.format(startAt))""# }
        body += #","attributes":\#(attributes ?? #"{"title":"Deposit confirmation","subtitle":"0x001...a3c31"}"#)"#
        body += #","state":\#(state ?? Self.progressState)"#
        if let ttlSeconds { body += #","ttlSeconds":\#(ttlSeconds)"# }
        if let alert { body += #","alert":\#(alert)"# }
        if let relevanceScore { body += #","relevanceScore":\#(relevanceScore)"# }
        body += "}"
        return try TestHTTPClient.json(
            port: port ?? self.port, method: "POST", path: "/api/partners/live-activities",
            token: partner.apiKey, json: body,
            headers: idempotencyKey.map { [("Idempotency-Key", $0)] } ?? [])
    }

    static let progressState =
        #"{"stages":["Confirming","Processing","Completed"],"currentStage":0,"progress":0.16,"statusText":"Confirmations: 1/6"}"#

    func update(
        _ partner: Partner, _ activityID: String, _ body: String, method: String = "POST",
        idempotencyKey: String? = nil
    ) throws -> TestHTTPClient.Response {
        let path =
            method == "PATCH"
            ? "/api/partners/live-activities/\(activityID)"
            : "/api/partners/live-activities/\(activityID)/update"
        return try request(
            method, path, token: partner.apiKey, json: body,
            headers: idempotencyKey.map { [("Idempotency-Key", $0)] } ?? [])
    }

    func end(_ partner: Partner, _ activityID: String, _ body: String? = nil) throws -> TestHTTPClient.Response {
        try request("DELETE", "/api/partners/live-activities/\(activityID)", token: partner.apiKey, json: body)
    }

    func get(_ partner: Partner, _ activityID: String) throws -> TestHTTPClient.Response {
        try request("GET", "/api/partners/live-activities/\(activityID)", token: partner.apiKey)
    }

    func putToken(_ activityID: String, device: String = "iphone", _ token: String) throws -> TestHTTPClient.Response {
        try host("PUT", "/api/internal/live-activities/\(activityID)/push-tokens/\(device)", #"{"token":"\#(token)"}"#)
    }

    /// The activity id of a 201.
    func activityID(_ response: TestHTTPClient.Response) throws -> String {
        guard response.status == 201, let id = (try? JSONParser.parse(response.body))?["activityId"]?.stringValue else {
            throw TestHTTPClient.Failure(description: "start: \(response.status) \(response.text)")
        }
        return id
    }

    @discardableResult
    func expect(_ response: TestHTTPClient.Response, _ statuses: Set<Int>) throws -> TestHTTPClient.Response {
        guard statuses.contains(response.status) else {
            throw TestHTTPClient.Failure(
                description: "expected \(statuses.sorted()), got \(response.status) \(response.text)")
        }
        return response
    }

    // MARK: - What the simulator received

    /// Live Activity pushes the simulator received for `token` (APNs), oldest first.
    func apnsPushes(to token: String) -> [SimulatorRecord] {
        simulator.received().filter { $0.service == .apns && $0.token == token }
    }

    /// FCM messages the simulator received for `token`, oldest first.
    func fcmMessages(to token: String) -> [SimulatorRecord] {
        simulator.received().filter { $0.service == .fcm && $0.token == token }
    }

    /// The `aps` of an APNs record.
    static func aps(_ record: SimulatorRecord) -> JSONValue? { record.payload?["aps"] }

    /// The `data` of an FCM record's message.
    static func data(_ record: SimulatorRecord) -> JSONValue? { record.payload?["message"]?["data"] }

    /// `herald_intake_live_activity_budget_total` of one partner and reason, from the intake's /metrics.
    func budgetCount(_ partner: Partner, _ reason: LiveActivityBudgetReason) throws -> Int {
        let text = try TestHTTPClient.send(port: intake.metricsPort, method: "GET", path: "/metrics").text
        let prefix =
            #"herald_intake_live_activity_budget_total{partner="\#(partner.miniApp)",reason="\#(reason.rawValue)"} "#
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return 0 }
        return Int(line.dropFirst(prefix.count)) ?? -1
    }

    /// Rows of this activity still in the outbox.
    func outstanding(_ activityID: String) throws -> Int {
        try db.count("SELECT count(*) FROM deliveries WHERE activity_id = $1::uuid", [activityID])
    }
}
