import Foundation
import Synchronization

@testable import HTTPServer

/// Both ways of running handlers; most tests run under each.
let dispatchModes: [HTTPServerConfiguration.Dispatch] = [.inline, .handlerThreads(ioThreads: 2)]

/// Loopback configuration on a free port.
func testConfiguration(
    threadCount: Int = 2,
    dispatch: HTTPServerConfiguration.Dispatch = .handlerThreads(ioThreads: 2),
    maxBodyBytes: Int = 65_536,
    shutdownGracePeriod: Duration = .seconds(5)
) -> HTTPServerConfiguration {
    HTTPServerConfiguration(
        host: "127.0.0.1",
        port: 0,
        threadCount: threadCount,
        dispatch: dispatch,
        maxBodyBytes: maxBodyBytes,
        connectionLimit: 256,
        connectionTimeoutSeconds: 10,
        shutdownGracePeriod: shutdownGracePeriod
    )
}

/// Starts a loopback server on a free port.
func startServer(
    _ dispatch: HTTPServerConfiguration.Dispatch,
    threadCount: Int = 2,
    maxBodyBytes: Int = 65_536,
    shutdownGracePeriod: Duration = .seconds(5),
    handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
) throws -> HTTPServer {
    let configuration = testConfiguration(
        threadCount: threadCount,
        dispatch: dispatch,
        maxBodyBytes: maxBodyBytes,
        shutdownGracePeriod: shutdownGracePeriod
    )
    return try HTTPServer(configuration: configuration, tooLarge: tooLargeResponse, handler: handler)
}

/// The answer tests expect for an oversized body.
@Sendable func tooLargeResponse() -> HTTPResponse {
    HTTPResponse(
        status: 413,
        headers: [(name: "Content-Type", value: "application/json")],
        body: Array(#"{"error":"body_too_large"}"#.utf8)
    )
}

/// Keeps every request a handler saw.
final class RequestRecorder: Sendable {
    private let requests = Mutex<[HTTPRequest]>([])

    func record(_ request: HTTPRequest) {
        requests.withLock { $0.append(request) }
    }

    var all: [HTTPRequest] { requests.withLock { $0 } }
    var count: Int { requests.withLock { $0.count } }
}

/// Runs `body(index)` on `count` dedicated threads (not the cooperative pool: the clients block) and waits.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// Deterministic pseudo-random bytes.
func patternBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// A chunked request body: the given pieces, then the last chunk.
func chunkedBody(_ pieces: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = []
    for piece in pieces where !piece.isEmpty {
        out += Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
    }
    out += Array("0\r\n\r\n".utf8)
    return out
}

/// A thread-safe counter that closures can capture.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)

    @discardableResult
    func increment() -> Int {
        storage.add(1, ordering: .relaxed).newValue
    }

    func decrement() {
        storage.subtract(1, ordering: .relaxed)
    }

    var value: Int { storage.load(ordering: .relaxed) }
}

/// The largest value ever stored.
final class Maximum: Sendable {
    private let storage = Atomic<Int>(0)

    func observe(_ value: Int) {
        var current = storage.load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = storage.compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    var value: Int { storage.load(ordering: .relaxed) }
}
