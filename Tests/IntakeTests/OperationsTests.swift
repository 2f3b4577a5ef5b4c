import Foundation
import HeraldCore
import HeraldTestSupport
import ServiceSupport
import Testing

@Suite("Health, metrics, configuration and logs", .requiresDatabase)
struct OperationsTests {
    let intake = IntakeHarness.shared

    @Test("healthz and readyz answer without credentials on the API's port, metrics on the metrics port only")
    func probes() throws {
        #expect(try intake.request("GET", "/healthz", token: nil).status == 200)
        #expect(try intake.request("GET", "/readyz", token: nil).json["status"] == .string("ready"))
        // The API's port answers /metrics as it answers any path it does not serve.
        let publicMetrics = try intake.request("GET", "/metrics", token: nil)
        let unknown = try intake.request("GET", "/metricz", token: nil)
        #expect(publicMetrics.status == 404 && publicMetrics.errorCode == "not_found")
        #expect(publicMetrics.body == unknown.body)
        #expect(!publicMetrics.text.contains("herald_intake"))
        #expect(intake.metricsPort != intake.port)
        // The metrics port serves nothing else.
        let other = try TestHTTPClient.send(
            port: intake.metricsPort, method: "GET", path: "/api/admin/mini-app-partners")
        #expect(other.status == 404)
        #expect(try TestHTTPClient.send(port: intake.metricsPort, method: "POST", path: "/metrics").status == 405)
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        _ = try intake.push(partner.key, pushBody(partner, emails: [user.email]))
        let metrics = try intake.scrapeMetrics()
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        for name in [
            "herald_intake_requests_total{route=\"/api/partners/notifications/push\",method=\"POST\",status=\"202\"}",
            "herald_intake_request_duration_seconds_bucket", "herald_intake_deliveries_enqueued_total",
            "herald_intake_rate_limited_total", "herald_intake_push_requests_accepted_total",
        ] {
            #expect(metrics.text.contains(name), "\(name)")
        }
    }

    /// herald-intake run with the test environment and `variable` set to `value` (expected to refuse to start).
    static func startIntake(with variable: String, _ value: String) throws -> (status: Int32, output: String) {
        var environment = IntakeProcess.environment(port: TestEnvironment.freePort())
        environment[variable] = value
        let result = try ChildProcess.run(IntakeProcess.executable, [], environment: environment)
        return (result.status, result.output)
    }

    @Test(
        "a missing or wrong variable stops the intake at start with a message naming it",
        arguments: [
            ("HERALD_ADMIN_TOKEN", ""),
            ("HERALD_HOST_TOKEN", "short"),
            ("HERALD_SIGNING_KEYS", "k1:bm90LWJhc2U2NA"),
            ("HERALD_INTAKE_PORT", "99999"),
            ("HERALD_INTAKE_METRICS_PORT", "99999"),
            ("HERALD_DEEPLINK_SCHEME", "Bad Scheme"),
            ("HERALD_SIGNING_KEY_ID", "nope"),
            ("HERALD_LA_MAX_ACTIVE_PER_USER", "0"),
            ("HERALD_LA_STARTS_PER_USER_APP_HOUR", "many"),
        ])
    func configuration(_ variable: String, _ value: String) throws {
        let result = try Self.startIntake(with: variable, value)
        #expect(result.status == 2)
        #expect(result.output.contains(variable), "\(result.output)")
    }

    @Test(
        "herald-intake refuses to start with a placeholder token, naming the variable and never the value",
        arguments: [
            ("HERALD_ADMIN_TOKEN", "CHANGE-ME-admin-token-at-least-16-chars"),
            ("HERALD_HOST_TOKEN", "CHANGE-ME-host-token"),
            ("HERALD_ADMIN_TOKEN_PREVIOUS", "changeme-0123456789abcdef"),
            ("HERALD_HOST_TOKEN_PREVIOUS", "our-Example-token-0123456789"),
            ("HERALD_ADMIN_TOKEN", "PLACEHOLDER-0123456789abcdef"),
        ])
    func placeholderTokensStopTheIntake(_ variable: String, _ value: String) throws {
        let result = try Self.startIntake(with: variable, value)
        #expect(result.status == 2)
        #expect(result.output.contains("\(variable): is a placeholder"), "\(result.output)")
        #expect(!result.output.contains(value), "\(result.output)")
        #expect(!result.output.contains("\"listening\""))
    }

    @Test("herald-intake serves /metrics on HERALD_INTAKE_METRICS_PORT and answers it 404 on HERALD_INTAKE_PORT")
    func metricsPortOfTheExecutable() throws {
        let process = try IntakeProcess()
        defer { process.stop() }
        #expect(try process.request("GET", "/metrics", token: nil).status == 404)
        let metrics = try TestHTTPClient.send(port: process.metricsPort, method: "GET", path: "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("herald_intake_requests_total{route=\"other\",method=\"GET\",status=\"404\"}"))
        process.stop()
        let listening = process.child.output.split(separator: "\n").first { $0.contains("\"listening\"") }
        #expect(listening?.contains("\"metricsPort\":\(process.metricsPort)") == true, "\(process.child.output)")
    }

    @Test("a metrics port already taken stops the intake at start, naming HERALD_INTAKE_METRICS_PORT")
    func metricsPortTaken() throws {
        let taken = intake.metricsPort
        #expect {
            _ = try IntakeHarness { $0.metricsPort = taken }
        } throws: { error in
            (error as? ConfigurationError)?.variable == "HERALD_INTAKE_METRICS_PORT"
        }
        // The shared intake still serves its metrics.
        #expect(try intake.scrapeMetrics().status == 200)
    }

    @Test(
        "the intake raises its file descriptor limit to the hard one, and warns when that is below what its connections need"
    )
    func fileDescriptorLimit() throws {
        let raised = try IntakeProcess(fileDescriptors: (soft: 256, hard: 4_096))
        raised.stop()
        let listening = raised.child.output.split(separator: "\n").first { $0.contains("\"listening\"") }
        #expect(listening?.contains("\"fileDescriptors\":4096") == true, "\(raised.child.output)")
        #expect(!raised.child.output.contains("file descriptor limit below"), "\(raised.child.output)")
        // 1,024 connections and their reserve of 256, a pool of 8, and the margin of 64.
        let low = try IntakeProcess(fileDescriptors: (soft: 256, hard: 512))
        low.stop()
        let warning = low.child.output.split(separator: "\n").first { $0.contains("file descriptor limit below") }
        #expect(warning?.contains("\"needed\":1352") == true, "\(low.child.output)")
        #expect(warning?.contains("\"limit\":512") == true, "\(low.child.output)")
    }

    @Test("a partner over its rate limit leaves one 429 line a second; the next line written counts those skipped")
    func rateLimitedLinesThrottled() throws {
        let process = try IntakeProcess()
        let partner = try intake.makePartner(perMinute: 1)
        let user = try intake.makeUser(tenant: partner.tenantID)
        let body = pushBody(partner, emails: [user.email])
        func push() throws -> Int {
            try process.request("POST", "/api/partners/notifications/push", token: partner.key, json: body).status
        }
        #expect(try push() == 202)
        var refusals = 0
        // Refused until, a second after the first line (on the child process's clock), a refusal's line is written
        // with the count of those skipped before it; looked for before each push, so none comes after it.
        try waitFor("a line counting the skipped refusals", interval: .milliseconds(50)) {
            let lines = process.child.output.split(separator: "\n")
            if lines.contains(where: { $0.contains("\"code\":\"rate_limited\"") && $0.contains("\"skipped\":") }) {
                return true
            }
            let status = try push()
            #expect(status == 429)
            refusals += 1
            return false
        }
        process.stop()
        let lines = process.child.output.split(separator: "\n").filter { $0.contains("\"code\":\"rate_limited\"") }
        let skipped = lines.compactMap { line -> Int? in
            guard let json = try? JSONParser.parse(String(line)) else { return nil }
            return json["skipped"]?.numberValue.map { Int($0) }
        }.reduce(0, +)
        // Every refusal is a line or counted in one; fewer lines than refusals.
        #expect(lines.count + skipped == refusals, "\(lines)")
        #expect(lines.count >= 2 && lines.count < refusals, "\(lines)")
    }

    @Test("logs are JSON lines without keys, tokens or emails")
    func logsWithoutSecrets() throws {
        let process = try IntakeProcess(extra: ["HERALD_LOG_LEVEL": "debug"])
        let partner = try intake.makePartner()
        let user = try intake.makeUser(tenant: partner.tenantID)
        #expect(
            try process.request(
                "POST", "/api/partners/notifications/push", token: partner.key,
                json: pushBody(partner, emails: [user.email])
            ).status == 202)
        #expect(
            try process.request(
                "POST", "/api/partners/notifications/push", token: partner.key,
                json: #"{"recipients":{"emails":["\#(user.email)"]},"title":"\#(String(repeating: "x", count: 200))"}"#
            ).status == 400)
        #expect(
            try process.request(
                "PUT", "/api/internal/users/\(user.id)/devices/x", token: IntakeHarness.hostToken,
                json: #"{"platform":"ios","environment":"production","apnsToken":"\#(user.apnsToken)"}"#
            ).status == 201)
        process.stop()
        let output = process.child.output
        let lines = output.split(separator: "\n")
        #expect(lines.count >= 3)
        for line in lines {
            #expect((try? JSONParser.parse(String(line))) != nil, "not JSON: \(line)")
        }
        for secret in [
            partner.key, IntakeHarness.adminToken, IntakeHarness.hostToken, user.email, user.email.lowercased(),
            user.apnsToken, user.fcmToken,
        ] {
            #expect(!output.contains(secret))
        }
        #expect(output.contains("\"route\":\"/api/partners/notifications/push\""))
    }

    @Test("at the default level a rejected request leaves one log line with its error code; admin changes are logged")
    func rejectedRequestsLogged() throws {
        let process = try IntakeProcess()
        let partner = try intake.makePartner()
        #expect(
            try process.request(
                "POST", "/api/partners/notifications/push", token: partner.key,
                json: #"{"recipients":{"emails":[]},"title":"t"}"#
            ).status == 400)
        #expect(
            try process.request(
                "DELETE", "/api/admin/mini-app-partners/\(partner.id)",
                token: IntakeHarness.adminToken
            ).status == 200)
        process.stop()
        let lines = process.child.output.split(separator: "\n").map(String.init)
        let rejected = lines.filter { $0.contains("\"status\":400") }
        #expect(rejected.count == 1)
        #expect(rejected.first?.contains("\"code\":\"invalid_field\"") == true)
        #expect(rejected.first?.contains("\"level\":\"info\"") == true)
        #expect(lines.contains { $0.contains("partner revoked") && $0.contains(partner.id) })
        #expect(!process.child.output.contains(partner.key))
        #expect(lines.contains { $0.contains("\"msg\":\"stopped\"") })
    }

    @Test("SIGTERM stops the intake with status 0")
    func gracefulStop() throws {
        let process = try IntakeProcess()
        process.child.process.terminate()
        process.child.process.waitUntilExit()
        #expect(process.child.process.terminationStatus == 0)
    }
}
