import Foundation
import HeraldTestSupport
import Postgres

/// A real `herald-intake` process, as deployed: configuration from the environment, JSON logs on
/// stdout. Used where a test needs several intake processes or the executable's own behaviour.
final class IntakeProcess: @unchecked Sendable {
    let port: UInt16
    /// HERALD_INTAKE_METRICS_PORT: `/metrics` is served there, never on `port`.
    let metricsPort: UInt16
    let child: ChildProcess

    static var executable: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-intake") }

    /// Every test process picks free ports: the default metrics port would collide between intakes run at once.
    static func environment(
        port: UInt16, metricsPort: UInt16 = TestEnvironment.freePort(),
        databaseURL: String = TestEnvironment.databaseURL,
        extra: [String: String] = [:]
    ) -> [String: String] {
        var environment = [
            "HERALD_DATABASE_URL": databaseURL,
            "HERALD_INTAKE_PORT": String(port),
            "HERALD_INTAKE_METRICS_PORT": String(metricsPort),
            "HERALD_ADMIN_TOKEN": IntakeHarness.adminToken,
            "HERALD_HOST_TOKEN": IntakeHarness.hostToken,
            "HERALD_SIGNING_KEYS":
                "\(IntakeHarness.signingKeyID):\(Data(IntakeHarness.signingKey).base64EncodedString())",
            "HERALD_INTAKE_THREADS": "8",
            "HERALD_DB_POOL_SIZE": "8",
        ]
        environment.merge(extra) { $1 }
        return environment
    }

    /// `fileDescriptors`: the soft and hard RLIMIT_NOFILE the process starts with (set by a shell that then execs it).
    init(
        databaseURL: String = TestEnvironment.databaseURL, extra: [String: String] = [:],
        fileDescriptors: (soft: Int, hard: Int)? = nil
    ) throws {
        _ = migratedDatabase
        port = TestEnvironment.freePort()
        metricsPort = TestEnvironment.freePort()
        let environment = Self.environment(port: port, metricsPort: metricsPort, databaseURL: databaseURL, extra: extra)
        if let fileDescriptors {
            child = try ChildProcess(
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", "ulimit -S -n \(fileDescriptors.soft) && ulimit -H -n \(fileDescriptors.hard) && exec \"$0\"",
                    Self.executable.path,
                ],
                environment: environment)
        } else {
            child = try ChildProcess(executable: Self.executable, environment: environment)
        }
        try waitUntilReady()
    }

    private func waitUntilReady() throws {
        try child.waitUntilReady("herald-intake ready") {
            (try? TestHTTPClient.send(port: port, method: "GET", path: "/readyz"))?.status == 200
        }
    }

    func request(
        _ method: String, _ path: String, token: String?, json: String? = nil,
        headers: [(String, String)] = []
    ) throws -> TestHTTPClient.Response {
        try TestHTTPClient.json(port: port, method: method, path: path, token: token, json: json, headers: headers)
    }

    func stop() { child.stop() }
}
