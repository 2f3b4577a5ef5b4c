import Foundation
import HTTP2
import HeraldTestSupport
import Testing

@Suite("GOAWAY, resets, connection loss, timeouts, PING")
struct FailureTests {
    @Test("GOAWAY mid-batch: every request still succeeds, the unprocessed ones are resent on a new connection")
    func goAwayMidBatch() async throws {
        let count = Counter()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                if count.increment() == 50 {
                    responder.goAway(debugData: Array(#"{"reason":"Shutdown"}"#.utf8))
                } else {
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1)
        defer { client.shutdown() }

        let results = await sendAll(client, (0..<200).map { HTTP2Request(path: "/\($0)", body: Array("\($0)".utf8)) })
        for (index, result) in results.enumerated() {
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.body == Array("\(index)".utf8))
        }
        let statistics = client.statistics
        #expect(statistics.goAwaysReceived == 1)
        #expect(statistics.requestsRetriedAfterGoAway >= 1)
        #expect(statistics.connectionsOpened == 2)
    }

    @Test("closeConnection: that request fails with connection_lost, later ones succeed on a new connection")
    func connectionLoss() async throws {
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                if request.path == "/drop" {
                    responder.closeConnection()
                } else {
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1)
        defer { client.shutdown() }

        #expect(try await client.send(HTTP2Request(path: "/before")).status == 200)
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/drop"))
            Issue.record("expected connection_lost")
        } catch {
            #expect(error.code == .connectionLost)
        }
        #expect(try await client.send(HTTP2Request(path: "/after")).status == 200)
        #expect(client.statistics.connectionsOpened == 2)
    }

    @Test("resetStream: the request fails with stream_reset and the connection stays")
    func streamReset() async throws {
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                if request.path == "/reset" {
                    responder.resetStream()
                } else {
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1)
        defer { client.shutdown() }
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/reset"))
            Issue.record("expected stream_reset")
        } catch {
            #expect(error.code == .streamReset)
        }
        #expect(try await client.send(HTTP2Request(path: "/ok")).status == 200)
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test("A request without an answer times out; the connection stays usable")
    func requestTimeout() async throws {
        let held = ResponderStore()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                if request.path == "/slow" {
                    held.keep(responder)
                } else {
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1)
        defer { client.shutdown() }

        let started = ContinuousClock.now
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/slow", timeout: .milliseconds(200)))
            Issue.record("expected a timeout")
        } catch {
            #expect(error.code == .timeout)
        }
        let elapsed = ContinuousClock.now - started
        // No upper bound: the server never answers, so only the timeout can end the request, and how
        // late the awaiting task resumes depends on everything else the suite runs on two cores.
        #expect(elapsed >= .milliseconds(190))
        // The late answer goes nowhere (the client reset the stream).
        held.takeAll().forEach { $0.respond(HTTP2Response(status: 200)) }
        #expect(try await client.send(HTTP2Request(path: "/ok")).status == 200)
        #expect(client.statistics.requestsTimedOut == 1)
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test("An idle connection is PINGed and stays open while the PINGs are answered")
    func pingOnIdle() async throws {
        let server = try startServer(tls: false)
        defer { server.stop() }
        // A PING unanswered for the interval closes the connection, on the loops' real clock: 100 ms was once too
        // short for a machine busy with the whole suite (a second connection opened); 500 ms leaves room.
        let client = try makeClient(for: server, tls: false, connectionCount: 1, pingInterval: .milliseconds(500))
        defer { client.shutdown() }
        #expect(try await client.send(HTTP2Request(path: "/")).status == 200)
        #expect(await eventually { client.statistics.pingsAnswered >= 2 })
        #expect(try await client.send(HTTP2Request(path: "/")).status == 200)
        let statistics = client.statistics
        #expect(statistics.pingsSent >= 2)
        #expect(statistics.connectionsOpened == 1)
    }
}
