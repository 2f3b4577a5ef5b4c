import Foundation
import HTTP2
import HeraldTestSupport
import Synchronization
import Testing

/// Throughput of the server (measured with h2load) and of the client (against the server). Off by default:
/// `HERALD_HTTP2_BENCH=1 swift test -c release --filter HTTP2Tests.BenchmarkTests`.
/// Optional: HERALD_HTTP2_BENCH_LOOPS (server loop threads, default 1), HERALD_HTTP2_BENCH_H2LOAD
/// (h2load arguments, default "-n 400000 -c 64 -m 32 -t 1"), HERALD_HTTP2_BENCH_REQUESTS (client, default 200000).
@Suite("Benchmark", .enabled(if: ProcessInfo.processInfo.environment["HERALD_HTTP2_BENCH"] != nil), .serialized)
struct BenchmarkTests {
    private let environment = ProcessInfo.processInfo.environment
    /// An APNs-sized JSON body.
    private static let body = Array(String(repeating: "x", count: 250).utf8)

    private static let apnsLikeHandler = ClosureHandler { _, responder in
        responder.respond(
            HTTP2Response(status: 200, headers: [HTTP2Header("apns-id", "0190a6e4-8f4c-7cc1-b3a1-2f3b9e0c1d2e")]))
    }

    @Test("h2load against the server", arguments: [true, false])
    func h2load(tls: Bool) throws {
        let loops = Int(environment["HERALD_HTTP2_BENCH_LOOPS"] ?? "") ?? 1
        let server = try startServer(tls: tls, loopCount: loops, handler: Self.apnsLikeHandler)
        defer { server.stop() }
        let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("h2bench-\(UUID().uuidString)")
        try Data(Self.body).write(to: bodyFile)
        defer { try? FileManager.default.removeItem(at: bodyFile) }

        let arguments = (environment["HERALD_HTTP2_BENCH_H2LOAD"] ?? "-n 400000 -c 64 -m 32 -t 1")
            .split(separator: " ").map(String.init)
        let url = "\(tls ? "https" : "http")://127.0.0.1:\(server.port)/3/device/abcdef"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/h2load")
        process.arguments = arguments + ["-d", bodyFile.path, "-H", "apns-topic: app.demo", url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let summary = text.split(separator: "\n").filter {
            $0.hasPrefix("finished in") || $0.hasPrefix("requests:") || $0.hasPrefix("status codes:")
        }
        print(
            "HTTP2Server \(tls ? "TLS" : "h2c"), \(loops) loop(s), h2load \(arguments.joined(separator: " ")):\n"
                + summary.joined(separator: "\n"))
        #expect(process.terminationStatus == 0)
        #expect(text.contains("0 failed"))
    }

    @Test("HTTP2Client against the server over TLS", arguments: [1, 2])
    func client(connections: Int) throws {
        let total = Int(environment["HERALD_HTTP2_BENCH_REQUESTS"] ?? "") ?? 200_000
        let window = 1000
        let server = try startServer(tls: true, handler: Self.apnsLikeHandler)
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: connections)
        defer { client.shutdown() }
        let request = HTTP2Request(
            method: "POST", path: "/3/device/abcdef",
            headers: [HTTP2Header("apns-topic", "app.demo"), HTTP2Header("apns-push-type", "alert")],
            body: Self.body)
        let driver = ClientDriver(client: client, request: request, total: total)
        // Warm up the connections first.
        _ = try awaitSync { try await client.send(request) }
        let started = ContinuousClock.now
        driver.start(window: window)
        driver.done.wait()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "HTTP2Client TLS, \(connections) connection(s), window \(window), \(total) requests: "
                + "\(Int(Double(total) / seconds)) requests/s, failures \(driver.failures.current)")
        #expect(driver.failures.current == 0)
    }
}

/// Keeps `window` requests in flight: each completion sends the next.
private final class ClientDriver: Sendable {
    let client: HTTP2Client
    let request: HTTP2Request
    let total: Int
    let sent = Atomic<Int>(0)
    let completed = Atomic<Int>(0)
    let failures = Counter()
    let done = DispatchSemaphore(value: 0)

    init(client: HTTP2Client, request: HTTP2Request, total: Int) {
        self.client = client
        self.request = request
        self.total = total
    }

    func start(window: Int) {
        for _ in 0..<window {
            sendNext()
        }
    }

    private func sendNext() {
        guard sent.add(1, ordering: .relaxed).newValue <= total else {
            return
        }
        client.send(request) { [self] result in
            if case .failure = result {
                failures.increment()
            }
            if completed.add(1, ordering: .relaxed).newValue == total {
                done.signal()
            } else {
                sendNext()
            }
        }
    }
}

/// Runs an async operation from synchronous test code.
private func awaitSync<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await operation()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        semaphore.signal()
    }
    semaphore.wait()
    return try result.withLock { $0! }.get()
}
