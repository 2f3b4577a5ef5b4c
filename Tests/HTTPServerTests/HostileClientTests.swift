import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// Requests built to hurt: truncated paths, ambiguous framing, what libmicrohttpd refuses by itself, too many
/// connections from one address, slow-loris, and answers that come later (docs/security.md names each).
@Suite("Hostile clients") struct HostileClientTests {
    static func server(
        _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in
            HTTPResponse(status: 200, body: Array("ok".utf8))
        }
    ) throws -> HTTPServer {
        var configuration = testConfiguration()
        configure(&configuration)
        return try HTTPServer(configuration: configuration, handler: handler)
    }

    /// A server of 4 connection slots (two per I/O thread), every one held by a connected, silent client.
    static func fullServer(idleTimeoutSeconds: Int) throws -> (HTTPServer, [RawHTTPClient]) {
        let server = try server {
            $0.connectionLimit = 4
            $0.perAddressConnectionLimit = 0
            $0.connectionTimeoutSeconds = idleTimeoutSeconds
        }
        let idle = try (0..<4).map { _ in try RawHTTPClient(port: server.port) }
        try waitFor("4 connections admitted", interval: .milliseconds(5)) { server.admittedConnectionCount == 4 }
        return (server, idle)
    }

    static func errorCode(_ response: RawHTTPClient.Response) -> String? {
        guard response.headers["content-type"] == "application/json",
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any],
            let error = object["error"] as? [String: Any], error.keys.contains("field")
        else { return nil }
        return error["code"] as? String
    }

    @Test(
        "A NUL in the path (escaped or raw), a control character, an escaped slash, a bad escape or invalid UTF-8 is 400 invalid_path; the handler never sees it",
        arguments: [
            "/users/alice%00x", "/users/alice\u{0}x", "/users/%zz", "/users/a%0Ab", "/users/%C3%28", "/users%2Falice",
            "/users/a%2fb", "/users/a%",
        ])
    func nulInThePathIsRefused(target: String) throws {
        let recorder = RequestRecorder()
        let server = try Self.server(handler: { request in
            recorder.record(request)
            return HTTPResponse(status: 200)
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(Self.errorCode(response) == "invalid_path")
        #expect(recorder.count == 0)
    }

    @Test("The path reaches the handler decoded whole; the query is decoded by the server too")
    func pathsAreDecodedWithTheirLength() throws {
        let recorder = RequestRecorder()
        let server = try Self.server(handler: { request in
            recorder.record(request)
            return HTTPResponse(status: 200)
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.request("GET", "/users/al%69ce%3Ax?name=a%20b+c&flag").status == 200)
        #expect(recorder.all.first?.path == "/users/alice:x")
        #expect(recorder.all.first?.query == ["name": "a b c", "flag": ""])
    }

    @Test(
        "Content-Length with Transfer-Encoding, or two different Content-Lengths: 400, connection closed, the pipelined request unanswered",
        arguments: [
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabc",
            "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        ])
    func ambiguousFramingClosesTheConnection(request: String) throws {
        let recorder = RequestRecorder()
        let server = try Self.server(handler: { request in
            recorder.record(request)
            return HTTPResponse(status: 200)
        })
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send(request + "GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(Self.errorCode(response) == "invalid_framing")
        #expect(response.headers["connection"]?.lowercased() == "close")
        #expect(client.isClosedByPeer())
        #expect(recorder.count == 0)
    }

    @Test("HTTP/1.1 without Host, or with two, is 400 missing_host; HTTP/1.0 needs none")
    func hostIsRequiredInHTTP11() throws {
        let server = try Self.server()
        defer { server.stop() }
        for request in [
            "GET /a HTTP/1.1\r\n\r\n", "GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "GET /a HTTP/1.2\r\n\r\n",
        ] {
            let client = try RawHTTPClient(port: server.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(Self.errorCode(response) == "missing_host")
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /a HTTP/1.0\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    @Test(
        "What libmicrohttpd refuses by itself, and the server's own size limits, answer in the JSON error shape",
        arguments: [
            ("GET /a HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "malformed_request"),
            ("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "malformed_request"),
            ("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413, "body_too_large"),
            ("GET /a HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported"),
            ("GET /" + String(repeating: "a", count: 9_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
            ("GET /" + String(repeating: "a", count: 200_000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
            (
                "GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 20_000) + "\r\n\r\n", 431,
                "headers_too_large"
            ),
            (
                "GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 200_000) + "\r\n\r\n", 431,
                "headers_too_large"
            ),
        ])
    func refusalsAreJSON(request: String, status: Int, code: String) throws {
        #expect(HTTPServer.replacesLibraryErrorPages)
        let rejections = RejectionLog()
        var configuration = testConfiguration()
        configuration.maxTargetBytes = 8_192
        configuration.maxHeaderBytes = 16_384
        let server = try HTTPServer(
            configuration: configuration,
            rejection: { rejection in
                rejections.record(rejection)
                return rejection.defaultResponse
            }
        ) { _ in HTTPResponse(status: 200) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try? client.send(request)
        let response = try client.readResponse()
        #expect(response.status == status)
        #expect(Self.errorCode(response) == code, "\(response.text)")
        // The owner saw it, so it can log it like any other rejection.
        #expect(rejections.codes.contains(code))
    }

    @Test(
        "A connection over the per-address limit is answered 503 too_many_connections with Retry-After and closed; held connections and other addresses are served, and room comes back"
    )
    func perAddressLimit() throws {
        let recorder = RequestRecorder()
        let server = try Self.server(
            { $0.perAddressConnectionLimit = 3 },
            handler: { request in
                recorder.record(request)
                return HTTPResponse(status: 200, body: Array("ok".utf8))
            })
        defer { server.stop() }
        var held: [RawHTTPClient] = []
        for _ in 0..<3 {
            let client = try RawHTTPClient(port: server.port)
            #expect(try client.request("GET", "/held").status == 200)
            held.append(client)
        }
        // Without a body and with one: both read whole, answered, then closed.
        for body in [nil, patternBytes(5_000)] {
            let refused = try RawHTTPClient(port: server.port, readTimeoutSeconds: 5)
            let response = try refused.request(body == nil ? "GET" : "POST", "/more", body: body)
            #expect(response.status == 503)
            #expect(Self.errorCode(response) == "too_many_connections")
            #expect(response.headers["retry-after"] == "1")
            #expect(response.headers["connection"]?.lowercased() == "close")
            #expect(response.headers["keep-alive"] == nil)
            #expect(refused.isClosedByPeer())
        }
        #expect(recorder.all.map(\.path) == ["/held", "/held", "/held"])
        let other = try RawHTTPClient(port: server.port, source: "127.0.0.2")
        #expect(try other.request("GET", "/healthz").status == 200)
        // A held connection is still served, and one closed makes room for a new one.
        #expect(try held[0].request("GET", "/again").status == 200)
        let admitted = server.admittedConnectionCount
        held.removeLast()
        try waitFor("the closed connection's slot freed", interval: .milliseconds(5)) {
            server.admittedConnectionCount < admitted
        }
        let newcomer = try RawHTTPClient(port: server.port)
        #expect(try newcomer.request("GET", "/newcomer").status == 200)
    }

    @Test(
        "A client pool that grows past the per-address limit while every connection is busy gets an HTTP answer to every request, never a reset"
    )
    func growingPoolIsAnsweredNotReset() throws {
        let limit = 4
        let outcomes = Mutex<[String]>([])
        let busy = Counter()
        let server = try Self.server(
            {
                $0.perAddressConnectionLimit = limit; $0.threadCount = 8
            },
            handler: { _ in
                // Every connection of the pool stays busy until each of the others is busy too or answered.
                busy.increment()
                try? waitFor("the whole pool busy or answered", timeout: .seconds(10), interval: .milliseconds(1)) {
                    busy.value + outcomes.withLock { $0.count } >= 12
                }
                return HTTPResponse(status: 202, body: Array("{}".utf8))
            })
        defer { server.stop() }
        // Each request on a connection of its own, sent the moment it connects (as a pool opens one when all are
        // busy): libmicrohttpd used to close the connections over the limit under the request (reset or EOF).
        runOnThreads(12) { index in
            let outcome: String
            do {
                let client = try RawHTTPClient(port: server.port, readTimeoutSeconds: 10)
                let response = try client.request("POST", "/push/\(index)", body: Array(#"{"n":1}"#.utf8))
                outcome = response.status == 503 ? "503 \(Self.errorCode(response) ?? "?")" : "\(response.status)"
            } catch {
                outcome = "no answer: \(error)"
            }
            outcomes.withLock { $0.append(outcome) }
        }
        let all = outcomes.withLock { $0 }
        #expect(all.count == 12)
        #expect(all.allSatisfy { $0 == "202" || $0 == "503 too_many_connections" }, "\(all)")
        #expect(all.filter { $0 == "202" }.count >= limit, "\(all)")
    }

    @Test(
        "A connection over the per-address limit that sends nothing is cut after about a second, not held for the read deadline"
    )
    func silentConnectionOverTheLimitIsCut() throws {
        let server = try Self.server {
            $0.perAddressConnectionLimit = 1; $0.requestReadTimeoutSeconds = 30
        }
        defer { server.stop() }
        let held = try RawHTTPClient(port: server.port)
        #expect(try held.request("GET", "/held").status == 200)
        let silent = try RawHTTPClient(port: server.port, readTimeoutSeconds: 10)
        let started = ContinuousClock.now
        #expect(silent.isClosedByPeer())
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(try held.request("GET", "/again").status == 200)
    }

    @Test(
        "With every connection slot taken by idle clients, a newcomer is answered 503 overloaded at once; once the idle timeout frees the slots, a new client is served"
    )
    func idleConnectionsMakeRoom() throws {
        let (server, idle) = try Self.fullServer(idleTimeoutSeconds: 1)
        defer { server.stop() }
        let refused = try RawHTTPClient(port: server.port, source: "127.0.0.2", readTimeoutSeconds: 15)
        let started = ContinuousClock.now
        let refusal = try refused.request("GET", "/healthz")
        #expect(refusal.status == 503)
        #expect(Self.errorCode(refusal) == "overloaded")
        #expect(refusal.headers["retry-after"] == "1")
        #expect(refusal.headers["connection"] == "close")
        #expect(ContinuousClock.now - started < .milliseconds(900))
        #expect(refused.isClosedByPeer())
        #expect(idle.allSatisfy { $0.isClosedByPeer() })
        let newcomer = try RawHTTPClient(port: server.port, source: "127.0.0.2", readTimeoutSeconds: 15)
        #expect(try newcomer.request("GET", "/healthz").status == 200)
    }

    @Test(
        "Refusals past the connection limit turn over at once: forty newcomers one after another, more than the reserve, are each answered"
    )
    func reserveRefusalsTurnOver() throws {
        let (server, idle) = try Self.fullServer(idleTimeoutSeconds: 10)
        defer { server.stop() }
        // Many more newcomers than the reserve (16), one after the other: each is refused and closed, so the
        // reserve never fills.
        for index in 0..<40 {
            let newcomer = try RawHTTPClient(port: server.port, readTimeoutSeconds: 5)
            let response = try newcomer.request("GET", "/n/\(index)")
            #expect(response.status == 503)
            #expect(Self.errorCode(response) == "overloaded")
        }
        #expect(idle.count == 4)
    }

    @Test(
        "Slow-loris: headers or a body trickled a byte at a time are cut off at the read deadline, well before the idle timeout",
        arguments: [false, true])
    func slowLorisIsCutOff(inBody: Bool) throws {
        let server = try Self.server {
            $0.requestReadTimeoutSeconds = 2
            $0.connectionTimeoutSeconds = 60
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port, readTimeoutSeconds: 1)
        let head = inBody ? "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" : "GET /a HTTP/1.1\r\n"
        try client.send(head)
        let started = ContinuousClock.now
        var cut = false
        // One byte every 300 ms keeps the idle timer from ever firing; only the deadline can end this.
        while ContinuousClock.now - started < .seconds(20) {
            do {
                try client.send(inBody ? "x" : "X-Slow: y\r\n")
            } catch {
                cut = true
                break
            }
            usleep(300_000)  // wall clock: the slow client's pace is what libmicrohttpd's timers see
        }
        #expect(cut)
        #expect(ContinuousClock.now - started < .seconds(20))
        // A fresh, prompt client is served.
        let prompt = try RawHTTPClient(port: server.port)
        #expect(try prompt.request("GET", "/prompt").status == 200)
    }

    @Test(
        "A deferred answer holds no handler thread: with one handler thread, other requests are answered meanwhile; the idle timeout does not cut the waiting connection"
    )
    func deferredAnswersHoldNoThread() throws {
        let parked = Mutex<[DeferredResponse]>([])
        let server = try Self.server({
            $0.threadCount = 1
            $0.connectionTimeoutSeconds = 1
        }) { request in
            guard request.path == "/wait" else { return HTTPResponse(status: 200, body: Array("quick".utf8)) }
            let pending = DeferredResponse()
            parked.withLock { $0.append(pending) }
            return .deferred(pending)
        }
        defer { server.stop() }
        let waiting = (0..<5).map { _ in try? RawHTTPClient(port: server.port) }.compactMap { $0 }
        for client in waiting { try client.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n") }
        try waitFor("5 requests parked", interval: .milliseconds(5)) { parked.withLock { $0.count } == 5 }
        let other = try RawHTTPClient(port: server.port)
        let quick = try other.request("GET", "/quick")
        #expect(quick.status == 200)
        #expect(quick.text == "quick")
        // The idle timeout (libmicrohttpd's own timer) closes that connection, opened after the waiting ones: they
        // outlive it, as a suspended connection is not idle.
        let idleFrom = ContinuousClock.now
        #expect(other.isClosedByPeer())
        #expect(ContinuousClock.now - idleFrom < .seconds(9), "closed by the idle timeout, not the read timeout")
        for pending in parked.withLock({ $0 }) {
            pending.complete(HTTPResponse(status: 200, body: Array("later".utf8)))
        }
        for client in waiting {
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "later")
        }
    }

    @Test("Inline handlers may defer too: the I/O thread waits for the answer")
    func inlineHandlersMayDefer() throws {
        var configuration = testConfiguration(dispatch: .inline)
        configuration.threadCount = 2
        let server = try HTTPServer(configuration: configuration) { _ in
            let pending = DeferredResponse()
            let thread = Thread {
                usleep(100_000)  // the answer comes later, from another thread: what the I/O thread must wait for
                pending.complete(HTTPResponse(status: 201, body: Array("done".utf8)))
            }
            thread.start()
            return .deferred(pending)
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.request("GET", "/deferred")
        #expect(response.status == 201)
        #expect(response.text == "done")
    }

    @Test("stop() answers deferred requests nobody completed with 503 and returns", arguments: dispatchModes)
    func stopAnswersOutstandingDeferredRequests(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let started = Counter()
        let server = try Self.server({
            $0.dispatch = dispatch
            $0.shutdownGracePeriod = .milliseconds(200)
        }) { _ in
            started.increment()
            return .deferred(DeferredResponse())
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
        try waitFor("the handler called", interval: .milliseconds(5)) { started.value >= 1 }
        // The handler has returned its deferred answer by now, or stop() waits for it: either way it is outstanding.
        server.stop()
        #expect(try client.readResponse().status == 503)
    }
}

/// Rejections the server reported to its owner.
private final class RejectionLog: Sendable {
    private let storage = Mutex<[HTTPRejection]>([])
    func record(_ rejection: HTTPRejection) { storage.withLock { $0.append(rejection) } }
    var codes: [String] { storage.withLock { $0.map(\.code) } }
}
