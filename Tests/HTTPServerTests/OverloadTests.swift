import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HTTPServer

@Suite("Past capacity: the queue wait limit and requests answered at once")
struct OverloadTests {
    /// A handler that holds `/block` until `release` is signalled, records what it sees, and answers "done <path>".
    private static func holding(_ release: DispatchSemaphore, seen: RequestRecorder)
        -> @Sendable (HTTPRequest) -> HTTPResponse
    {
        { request in
            seen.record(request)
            if request.path == "/block" {
                _ = release.wait(timeout: .now() + 10)
            }
            return HTTPResponse(status: 200, body: Array("done \(request.path)".utf8))
        }
    }

    /// One handler thread on one I/O thread, the queue wait measured on `clock`; `limited`: a 100 ms queue wait
    /// limit and `/live` answered at once.
    private static func start(
        limited: Bool, clock: TestClock, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws -> HTTPServer {
        var configuration = testConfiguration(threadCount: 1, dispatch: .handlerThreads(ioThreads: 1))
        configuration.queueClock = { UInt64(clock.now.timeIntervalSince1970 * 1_000_000_000) }
        if limited {
            configuration.queueWaitLimitMilliseconds = 100
            configuration.answeredAtOnce = { $0.path == "/live" }
        }
        return try HTTPServer(configuration: configuration, handler: handler)
    }

    /// Sends `GET /block` on a new connection and waits until it holds the only handler thread.
    private static func occupyTheHandler(_ server: HTTPServer, seen: RequestRecorder) throws -> RawHTTPClient {
        let blocked = try RawHTTPClient(port: server.port)
        try blocked.send("GET /block HTTP/1.1\r\nHost: localhost\r\n\r\n")
        try waitFor("the handler holding /block", interval: .milliseconds(1)) {
            seen.all.contains { $0.path == "/block" }
        }
        return blocked
    }

    /// Sends `POST /work` on a new connection and waits until it is queued for the handler thread.
    private static func queueWork(_ server: HTTPServer) throws -> RawHTTPClient {
        let queued = try RawHTTPClient(port: server.port)
        try queued.send("POST /work HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}")
        try waitFor("/work queued", interval: .milliseconds(1)) { server.context.pool?.queuedCount == 1 }
        return queued
    }

    @Test("A request that waited past the limit is refused 503 overloaded, unprocessed, and its connection stays open")
    func waitedTooLongIsRefused() throws {
        let release = DispatchSemaphore(value: 0)
        let seen = RequestRecorder()
        let clock = TestClock(Date(timeIntervalSince1970: 0))
        let server = try Self.start(limited: true, clock: clock, handler: Self.holding(release, seen: seen))
        defer { server.stop() }

        let blocked = try Self.occupyTheHandler(server, seen: seen)
        let queued = try Self.queueWork(server)
        clock.advance(.milliseconds(300))  // past the 100 ms queue wait limit
        release.signal()
        #expect(try blocked.readResponse().text == "done /block")

        let refused = try queued.readResponse()
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect(refused.headers["connection"] == nil)
        let error = try #require(JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
        #expect((error["error"] as? [String: Any])?["code"] as? String == "overloaded")
        #expect(seen.all.map(\.path) == ["/block"])

        // The same connection is served once the queue is short again.
        let next = try queued.request("POST", "/work", body: Array("{}".utf8))
        #expect(next.status == 200)
        #expect(next.text == "done /work")
        #expect(seen.all.map(\.path) == ["/block", "/work"])
    }

    @Test("A request answered at once is served while every handler thread is busy")
    func answeredAtOnceSkipsTheQueue() throws {
        let release = DispatchSemaphore(value: 0)
        let seen = RequestRecorder()
        let clock = TestClock(Date(timeIntervalSince1970: 0))
        let server = try Self.start(limited: true, clock: clock, handler: Self.holding(release, seen: seen))
        defer { server.stop() }

        let blocked = try Self.occupyTheHandler(server, seen: seen)
        clock.advance(.milliseconds(150))  // well past the queue wait limit, the only handler thread still held
        for _ in 0..<3 {
            let live = try RawHTTPClient(port: server.port).request("GET", "/live")
            #expect(live.status == 200)
            #expect(live.text == "done /live")
        }
        release.signal()
        #expect(try blocked.readResponse().text == "done /block")
    }

    @Test("Without a limit a request waits as long as it takes")
    func noLimitWaits() throws {
        let release = DispatchSemaphore(value: 0)
        let seen = RequestRecorder()
        let clock = TestClock(Date(timeIntervalSince1970: 0))
        let server = try Self.start(limited: false, clock: clock, handler: Self.holding(release, seen: seen))
        defer { server.stop() }

        let blocked = try Self.occupyTheHandler(server, seen: seen)
        let queued = try Self.queueWork(server)
        clock.advance(.milliseconds(300))  // longer than the limit the other tests set
        release.signal()
        #expect(try blocked.readResponse().text == "done /block")
        #expect(try queued.readResponse().text == "done /work")
    }

    @Test("The queue wait limit is validated")
    func limitIsValidated() {
        var configuration = testConfiguration()
        configuration.queueWaitLimitMilliseconds = -1
        #expect(throws: HTTPServerError.self) { try configuration.validate() }
        configuration.queueWaitLimitMilliseconds = 3_600_001
        #expect(throws: HTTPServerError.self) { try configuration.validate() }
        configuration.queueWaitLimitMilliseconds = 1_000
        #expect(throws: Never.self) { try configuration.validate() }
    }
}
