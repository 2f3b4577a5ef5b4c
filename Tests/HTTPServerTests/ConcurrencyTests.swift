import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HTTPServer

@Suite("Blocking handlers under concurrent load")
struct ConcurrencyTests {
    @Test(
        "200 requests over 16 connections, handler sleeping 5 ms, threadCount 8: every answer is the right one",
        arguments: dispatchModes)
    func manyConcurrentRequests(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let inFlight = Counter()
        let maxInFlight = Maximum()
        let handled = Counter()
        let server = try startServer(dispatch, threadCount: 8) { request in
            maxInFlight.observe(inFlight.increment())
            usleep(5_000)  // stands in for a Postgres round trip: the handler's work, not a wait of the test
            inFlight.decrement()
            handled.increment()
            let id = request.query["id"] ?? "?"
            return HTTPResponse(
                status: 200,
                headers: [(name: "X-Id", value: id)],
                body: Array("\(id):\(request.body.count):".utf8) + request.body
            )
        }
        defer { server.stop() }

        let connections = 16
        let total = 200
        let failures = Mutex<[String]>([])
        let answered = Counter()
        let started = ContinuousClock.now
        runOnThreads(connections) { connection in
            do {
                let client = try RawHTTPClient(port: server.port)
                for index in stride(from: connection, to: total, by: connections) {
                    let id = "c\(connection)-r\(index)"
                    let body = index.isMultiple(of: 3) ? nil : patternBytes(index * 37, seed: UInt64(index))
                    let response = try client.request(body == nil ? "GET" : "POST", "/work?id=\(id)", body: body)
                    let expected = Array("\(id):\(body?.count ?? 0):".utf8) + (body ?? [])
                    if response.status != 200 || response.headers["x-id"] != id || response.body != expected {
                        failures.withLock { $0.append("\(id): status \(response.status)") }
                    } else {
                        answered.increment()
                    }
                }
            } catch {
                failures.withLock { $0.append("connection \(connection): \(error)") }
            }
        }
        let elapsed = ContinuousClock.now - started

        let failed = failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed)")
        #expect(answered.value == total)
        #expect(handled.value == total)
        #expect(maxInFlight.value <= 8)
        if dispatch != .inline {
            // Dedicated handler threads: requests are in flight together whichever connection they came on.
            // (Inline handlers promise no such thing: the connections of one burst may all land on one
            // libmicrohttpd worker and queue behind each other; see the next test.)
            #expect(maxInFlight.value >= 4)
            #expect(elapsed < .seconds(30))
        }
        // Every request's state was released (the completion callbacks ran).
        try waitFor("every request released", timeout: .seconds(2), interval: .milliseconds(1)) {
            server.openRequestCount == 0
        }
    }

    @Test("With handler threads a blocked handler never stalls another connection, even on the same I/O thread")
    func blockedHandlerDoesNotStallOthers() throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let server = try startServer(.handlerThreads(ioThreads: 1), threadCount: 2) { request in
            if request.path == "/block" {
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
                return HTTPResponse(status: 200, body: Array("released".utf8))
            }
            return HTTPResponse(status: 200, body: Array("quick".utf8))
        }
        defer { server.stop() }
        let blocked = try RawHTTPClient(port: server.port)
        try blocked.send("GET /block HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(entered.wait(timeout: .now() + 10) == .success)

        // Same (single) I/O thread, other connection: answered while the first handler still waits.
        let started = ContinuousClock.now
        let quick = try RawHTTPClient(port: server.port).request("GET", "/quick")
        #expect(quick.text == "quick")
        #expect(ContinuousClock.now - started < .seconds(5))

        release.signal()
        #expect(try blocked.readResponse().text == "released")
    }
}
