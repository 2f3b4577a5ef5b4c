import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `heraldctl probe`, the containers' health check, as the image runs it: the real executable,
/// without HERALD_DATABASE_URL, against a real herald-intake.
@Suite("heraldctl probe", .requiresDatabase)
struct ProbeTests {
    static var heraldctl: URL { TestEnvironment.binDirectory.appendingPathComponent("heraldctl") }
    static var intakeBinary: URL { TestEnvironment.binDirectory.appendingPathComponent("herald-intake") }

    /// The environment of a container's health check: nothing Herald-specific, no database.
    static var bareEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in environment.keys where name.hasPrefix("HERALD_") && name != "HERALD_BIN_DIR" {
            environment.removeValue(forKey: name)
        }
        return environment
    }

    static func probe(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(heraldctl, ["probe"] + arguments, environment: bareEnvironment)
    }

    /// A real intake on a free port, ready; migrated first by heraldctl itself.
    static func startIntake() throws -> (child: ChildProcess, port: UInt16) {
        var migrate = ProcessInfo.processInfo.environment
        migrate["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        let migrated = try ChildProcess.run(heraldctl, ["migrate"], environment: migrate)
        guard migrated.status == 0 else { throw TestHTTPClient.Failure(description: "migrate: \(migrated.output)") }
        let port = TestEnvironment.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
        environment["HERALD_INTAKE_PORT"] = String(port)
        environment["HERALD_INTAKE_METRICS_PORT"] = String(TestEnvironment.freePort())
        environment["HERALD_ADMIN_TOKEN"] = "probe-admin-token-0123456789"
        environment["HERALD_HOST_TOKEN"] = "probe-host-token-0123456789"
        environment["HERALD_SIGNING_KEYS"] = "k1:" + Data(repeating: 7, count: 32).base64EncodedString()
        environment["HERALD_INTAKE_THREADS"] = "2"
        environment["HERALD_DB_POOL_SIZE"] = "2"
        let child = try ChildProcess(executable: intakeBinary, environment: environment)
        try child.waitUntilReady("herald-intake ready", timeout: .seconds(30)) {
            (try? TestHTTPClient.send(port: port, method: "GET", path: "/readyz", timeoutSeconds: 2))?.status == 200
        }
        return (child, port)
    }

    @Test("2xx from a real intake is exit 0, with no database settings; by IP and by host name")
    func answersFromTheIntake() throws {
        let intake = try Self.startIntake()
        defer { intake.child.stop() }
        let ready = try Self.probe(["http://127.0.0.1:\(intake.port)/readyz"])
        #expect(ready.status == 0, "\(ready.output)")
        #expect(ready.output.contains("answered 200"), "\(ready.output)")
        let healthy = try Self.probe(["http://localhost:\(intake.port)/healthz", "--timeout", "5"])
        #expect(healthy.status == 0, "\(healthy.output)")
    }

    @Test("a non-2xx answer is exit 1 and names the status")
    func non2xxFails() throws {
        let intake = try Self.startIntake()
        defer { intake.child.stop() }
        let missing = try Self.probe(["http://127.0.0.1:\(intake.port)/no-such-path"])
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.output.contains("answered 404"), "\(missing.output)")
    }

    @Test("a refused connection is exit 1")
    func refused() throws {
        let port = RefusingPort()
        let result = try Self.probe(["http://127.0.0.1:\(port.port)/readyz"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("connect"), "\(result.output)")
    }

    @Test("a peer that accepts and never answers is exit 1 once --timeout passed")
    func silentPeerTimesOut() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(listen(fd, 8) == 0)
        let port = UInt16(bigEndian: address.sin_port)
        let result = try Self.probe(["http://127.0.0.1:\(port)/readyz", "--timeout", "0.5"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("timed out"), "\(result.output)")
    }

    @Test(
        "bad usage is exit 2",
        arguments: [
            [], ["https://127.0.0.1:1/readyz"], ["127.0.0.1:80/readyz"], ["http://127.0.0.1:99999/"],
            ["http://127.0.0.1:80/", "--timeout", "0"], ["http://127.0.0.1:80/", "--timeout", "soon"],
            ["http://127.0.0.1:80/", "--retries", "3"], ["http://a/", "http://b/"], ["http:///readyz"],
        ])
    func usage(_ arguments: [String]) throws {
        let result = try Self.probe(arguments)
        #expect(result.status == 2, "\(arguments): \(result.output)")
        #expect(result.output.contains("usage: heraldctl probe"), "\(result.output)")
    }
}
