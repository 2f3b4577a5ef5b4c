import Foundation
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// `Keep-Alive: timeout=N` on answers that leave the connection open, N a second under the idle timeout, so a
/// client that retires idle connections by it never sends on a connection the server is closing.
@Suite("Keep-Alive") struct KeepAliveTests {
    static func server(idleTimeoutSeconds: Int = 10) throws -> HTTPServer {
        var configuration = testConfiguration()
        configuration.connectionTimeoutSeconds = idleTimeoutSeconds
        return try HTTPServer(configuration: configuration) { _ in HTTPResponse(status: 200, body: Array("ok".utf8)) }
    }

    @Test(
        "An answer on a keep-alive connection says timeout a second under the idle timeout, on each request",
        arguments: dispatchModes)
    func keepAliveAnswersCarryTheTimeout(dispatch: HTTPServerConfiguration.Dispatch) throws {
        var configuration = testConfiguration(dispatch: dispatch)
        configuration.connectionTimeoutSeconds = 15
        let server = try HTTPServer(configuration: configuration) { _ in HTTPResponse(status: 200) }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for _ in 0..<3 {
            let response = try client.request("POST", "/a", body: Array("{}".utf8))
            #expect(response.status == 200)
            #expect(response.headers["keep-alive"] == "timeout=14")
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
    }

    @Test(
        "No Keep-Alive when the connection closes after the answer: Connection: close, HTTP/1.0 without keep-alive, a refusal"
    )
    func noKeepAliveOnClosingAnswers() throws {
        let server = try Self.server()
        defer { server.stop() }
        let closing = try RawHTTPClient(port: server.port)
        let closed = try closing.request("GET", "/a", headers: [("Connection", "close")])
        #expect(closed.status == 200)
        #expect(closed.headers["keep-alive"] == nil)

        let old = try RawHTTPClient(port: server.port)
        try old.send("GET /a HTTP/1.0\r\n\r\n")
        #expect(try old.readResponse().headers["keep-alive"] == nil)

        let oldKeepingAlive = try RawHTTPClient(port: server.port)
        try oldKeepingAlive.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try oldKeepingAlive.readResponse().headers["keep-alive"] == "timeout=9")

        let refused = try RawHTTPClient(port: server.port)
        let response = try refused.request("GET", "/a%00b")
        #expect(response.status == 400)
        #expect(response.headers["keep-alive"] == nil)
    }

    @Test("Without an idle timeout of 2 s or more there is no Keep-Alive header", arguments: [0, 1])
    func noHeaderWithoutAUsableTimeout(idle: Int) throws {
        let server = try Self.server(idleTimeoutSeconds: idle)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let response = try client.request("GET", "/a")
        #expect(response.status == 200)
        #expect(response.headers["keep-alive"] == nil)
    }

    @Test(
        "A client that reuses a connection idle for just under the advertised timeout is served; the server closes it after its own"
    )
    func theAdvertisedTimeoutIsSafe() throws {
        let server = try Self.server(idleTimeoutSeconds: 2)
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port, readTimeoutSeconds: 10)
        let first = try client.request("GET", "/a")
        #expect(first.headers["keep-alive"] == "timeout=1")
        // libmicrohttpd's idle timer runs on its own clock: this test of it waits just under it, for real.
        for _ in 0..<3 {
            usleep(950_000)  // wall clock: idle just under libmicrohttpd's own timer
            #expect(try client.request("GET", "/again").status == 200)
        }
        let idleFrom = ContinuousClock.now
        #expect(client.isClosedByPeer())
        #expect(ContinuousClock.now - idleFrom >= .milliseconds(1_500))
    }
}
