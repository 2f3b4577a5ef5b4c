import Foundation
import HeraldTestSupport
import Synchronization
import Testing

@testable import HTTPServer

@Suite("Start, stop and configuration")
struct LifecycleTests {
    /// Signals `release` `count` times once `server`'s stop() is under way (draining), from a thread of its own:
    /// handlers held on it are still running when stop() begins, and stop() must wait for them.
    static func release(_ release: DispatchSemaphore, count: Int, onceStopping server: HTTPServer) {
        Thread.detachNewThread {
            try? waitFor("stop() under way", interval: .milliseconds(1)) {
                server.context.isDraining.load(ordering: .relaxed)
            }
            for _ in 0..<count { release.signal() }
        }
    }

    @Test("stop() is idempotent, also from several threads at once, and frees the port")
    func stopIsIdempotentAndFreesThePort() throws {
        let server = try startServer(.handlerThreads(ioThreads: 2)) { _ in HTTPResponse(status: 204) }
        let port = server.port
        #expect(port != 0)
        let client = try RawHTTPClient(port: port)
        #expect(try client.request("GET", "/").status == 204)

        runOnThreads(4) { _ in server.stop() }
        server.stop()
        server.stop()

        #expect(throws: RawHTTPClient.Failure.self) { try RawHTTPClient(port: port) }
        // The open keep-alive connection was closed by the stop.
        #expect(client.isClosedByPeer())

        var configuration = testConfiguration()
        configuration.port = port
        let again = try HTTPServer(configuration: configuration, tooLarge: tooLargeResponse) { _ in
            HTTPResponse(status: 200)
        }
        #expect(again.port == port)
        #expect(try RawHTTPClient(port: port).request("GET", "/").status == 200)
        again.stop()
    }

    @Test("stop() lets a request in progress finish and its answer go out, then returns", arguments: dispatchModes)
    func stopWaitsForInFlightHandlers(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let finished = Counter()
        let server = try startServer(dispatch) { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 10)  // held until stop() began: what stop() must wait for
            finished.increment()
            return HTTPResponse(status: 200, body: Array("late".utf8))
        }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
        #expect(entered.wait(timeout: .now() + 5) == .success)

        Self.release(release, count: 1, onceStopping: server)
        server.stop()
        #expect(finished.value == 1, "stop() returned before the handler")

        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "late")
        #expect(response.headers["connection"]?.lowercased() == "close")
        #expect(server.openRequestCount == 0)
    }

    @Test(
        "With no grace period stop() still waits for running handlers, then closes everything",
        arguments: dispatchModes)
    func stopWithoutGrace(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let finished = Counter()
        let server = try startServer(dispatch, threadCount: 4, shutdownGracePeriod: .zero) { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 10)  // held until stop() began: what stop() must wait for
            finished.increment()
            return HTTPResponse(status: 200)
        }
        let clients = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
        for client in clients {
            try client.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi")
        }
        #expect(entered.wait(timeout: .now() + 5) == .success)
        Self.release(release, count: clients.count, onceStopping: server)
        server.stop()
        #expect(finished.value >= 1)
        let afterStop = finished.value
        // Wall clock: nothing signals a handler that never runs; one let go after stop() would have finished by now.
        usleep(100_000)
        #expect(finished.value == afterStop, "a handler ran after stop() returned")
        for client in clients {
            _ = try? client.readResponse()
            #expect(client.isClosedByPeer())
        }
    }

    @Test("A request completed after the handler threads stopped is answered 503 and stop() still succeeds")
    func requestAfterHandlerThreadsStopped() throws {
        let calls = Counter()
        let server = try startServer(.handlerThreads(ioThreads: 1)) { _ in
            calls.increment()
            return HTTPResponse(status: 200)
        }
        let client = try RawHTTPClient(port: server.port)
        #expect(try client.request("GET", "/before").status == 200)
        // What stop() does between draining and stopping libmicrohttpd, here with a connection still open.
        server.context.pool?.shutdown()
        let response = try client.request("POST", "/after", body: Array("x".utf8))
        #expect(response.status == 503)
        #expect(calls.value == 1)
        server.stop()
        #expect(client.isClosedByPeer())
    }

    @Test("A port already in use fails with bind_failed")
    func bindFailure() throws {
        let first = try startServer(.inline) { _ in HTTPResponse(status: 200) }
        defer { first.stop() }
        var configuration = testConfiguration()
        configuration.port = first.port
        let error = #expect(throws: HTTPServerError.self) {
            try HTTPServer(configuration: configuration, tooLarge: tooLargeResponse) { _ in HTTPResponse(status: 200) }
        }
        #expect(error?.code == "bind_failed")
        #expect(error?.message.contains("\(first.port)") == true)
    }

    @Test(
        "Out-of-range settings fail with invalid_configuration naming the setting",
        arguments: [
            ("threadCount", HTTPServerConfiguration(threadCount: 0)),
            ("maxBodyBytes", HTTPServerConfiguration(maxBodyBytes: -1)),
            ("connectionLimit", HTTPServerConfiguration(threadCount: 8, dispatch: .inline, connectionLimit: 4)),
            ("ioThreads", HTTPServerConfiguration(dispatch: .handlerThreads(ioThreads: 0))),
            ("connectionTimeoutSeconds", HTTPServerConfiguration(connectionTimeoutSeconds: -5)),
            ("host", HTTPServerConfiguration(host: "not an address")),
        ])
    func invalidConfiguration(name: String, configuration: HTTPServerConfiguration) {
        let error = #expect(throws: HTTPServerError.self) {
            try HTTPServer(configuration: configuration, tooLarge: tooLargeResponse) { _ in HTTPResponse(status: 200) }
        }
        #expect(error?.code == "invalid_configuration")
        #expect(error?.message.contains(name) == true)
    }

    @Test("Defaults")
    func defaults() {
        let configuration = HTTPServerConfiguration()
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.maxBodyBytes == 65_536)
        #expect(configuration.threadCount >= 1)
    }
}
