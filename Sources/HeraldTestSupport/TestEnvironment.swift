import Foundation

/// What `scripts/test` provides to the integration tests.
public enum TestEnvironment {
    /// The throwaway database of this test run. Integration tests need a real Postgres: run them
    /// through `scripts/test`, which starts one.
    public static var databaseURL: String {
        guard let url = ProcessInfo.processInfo.environment["HERALD_DATABASE_URL"], !url.isEmpty else {
            fatalError("HERALD_DATABASE_URL is not set: run the tests with scripts/test, which starts Postgres")
        }
        return url
    }

    /// The folder with the built executables (`swift build --show-bin-path`).
    public static var binDirectory: URL {
        if let path = ProcessInfo.processInfo.environment["HERALD_BIN_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // The test bundle lives in the same folder as the executables.
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// The repository root, found from this file's location.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A URL for another database on the same server (libpq URI or key=value string).
    public static func databaseURL(named name: String, on server: String = databaseURL) -> String {
        let url = server
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            guard let schemeEnd = url.range(of: "://") else { return url }
            let rest = url[schemeEnd.upperBound...]
            let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
            let queryStart = rest[pathStart...].firstIndex(of: "?") ?? rest.endIndex
            return String(url[..<schemeEnd.upperBound]) + rest[..<pathStart] + "/" + name + rest[queryStart...]
        }
        return url + " dbname=" + name
    }

    /// A short random suffix for names that must not collide between tests.
    public static func unique(_ prefix: String) -> String {
        prefix + "-" + String(UInt64.random(in: 0..<UInt64.max), radix: 36)
    }

    /// A free TCP port on loopback (bound, read and released).
    public static func freePort() -> UInt16 { RefusingPort().port }
}

/// A loopback port that refuses every connection for as long as this value lives: bound and not
/// listening, so no other test can take it and no client's own ephemeral port can be it (a
/// connection to a merely free port can, rarely, connect to itself). Bound with SO_REUSEADDR, so a
/// server (whose listening socket sets it too) can start listening on it while it is still held:
/// the port is never free in between.
public final class RefusingPort: @unchecked Sendable {
    public let port: UInt16
    private let fd: Int32

    public init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }
}
