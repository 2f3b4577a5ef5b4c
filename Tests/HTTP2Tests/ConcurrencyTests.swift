import Foundation
import HTTP2
import HeraldTestSupport
import Testing

@Suite("Concurrency and stream limits")
struct ConcurrencyTests {
    @Test("2,000 concurrent requests over 2 connections are all answered correctly")
    func manyConcurrentRequests() async throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 2)
        defer { client.shutdown() }

        let requests = (0..<2000).map { index in
            HTTP2Request(
                path: "/item/\(index)", headers: [HTTP2Header("x-test", "\(index)")],
                body: Array("body-\(index)".utf8))
        }
        let results = await sendAll(client, requests)
        for (index, result) in results.enumerated() {
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.header("x-test-echo") == "\(index)")
            #expect(response.body == Array("body-\(index)".utf8))
        }
        let statistics = client.statistics
        #expect(statistics.connectionsOpened == 2)
        #expect(statistics.streamsInFlight == 0)
        #expect(statistics.queued == 0)
        // Both connections idle: 1,000 streams each may open (our cap and the server's SETTINGS agree).
        #expect(await eventually { client.statistics.streamsAvailable == 2000 })
    }

    @Test("The server's SETTINGS_MAX_CONCURRENT_STREAMS is honoured")
    func serverStreamLimit() async throws {
        let gauge = ConcurrencyGauge()
        let server = try startServer(
            maxConcurrentStreams: 5,
            handler: ClosureHandler { request, responder in
                gauge.enter()
                // Answer later, from another thread.
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) {
                    gauge.leave()
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1)
        defer { client.shutdown() }

        let results = await sendAll(client, (0..<60).map { HTTP2Request(path: "/\($0)") })
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(gauge.maximum == 5)
        #expect(client.statistics.requestsRetriedAfterRefused == 0)
        // The pipe's size as the worker's metrics report it: the server's 5, not our 1,000.
        #expect(await eventually { client.statistics.streamsAvailable == 5 })
    }

    /// A server that answers every request with `status`, each 30 ms late, and counts how many requests it holds
    /// at once (before the first answer, and overall).
    static func authenticatingServer(status: Int) throws
        -> (server: HTTP2Server, gauge: ConcurrencyGauge, beforeFirstAnswer: ConcurrencyGauge)
    {
        let gauge = ConcurrencyGauge()
        let answered = Counter()
        let maximumBeforeFirstAnswer = ConcurrencyGauge()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                let now = gauge.enter()
                if answered.current == 0 {
                    for _ in 0..<now { maximumBeforeFirstAnswer.enter() }
                    for _ in 0..<now { maximumBeforeFirstAnswer.leave() }
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(30)) {
                    gauge.leave()
                    answered.increment()
                    responder.respond(HTTP2Response(status: status, body: Array(#"{"reason":"x"}"#.utf8)))
                }
            })
        return (server, gauge, maximumBeforeFirstAnswer)
    }

    @Test(
        "streamsUntilAuthenticated = 1: one stream until the first answer that is not 401/403, then many",
        arguments: [200, 400, 410, 500])
    func oneStreamUntilAuthenticated(status: Int) async throws {
        let (server, gauge, beforeFirstAnswer) = try Self.authenticatingServer(status: status)
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1, streamsUntilAuthenticated: 1)
        defer { client.shutdown() }

        let results = await sendAll(client, (0..<20).map { HTTP2Request(path: "/\($0)") })
        #expect(results.allSatisfy { (try? $0.get().status) == status })
        #expect(beforeFirstAnswer.maximum == 1)
        // Every answer is that status: a 4xx or 5xx proves the credentials were accepted as well as a 200 does.
        #expect(gauge.maximum > 1)
    }

    @Test("401 and 403 do not lift streamsUntilAuthenticated", arguments: [401, 403])
    func oneStreamWhileUnauthenticated(status: Int) async throws {
        let gauge = ConcurrencyGauge()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                gauge.enter()
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) {
                    gauge.leave()
                    responder.respond(HTTP2Response(status: status))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 1, streamsUntilAuthenticated: 1)
        defer { client.shutdown() }

        let results = await sendAll(client, (0..<10).map { HTTP2Request(path: "/\($0)") })
        #expect(results.allSatisfy { (try? $0.get().status) == status })
        #expect(gauge.maximum == 1)
    }

    @Test("Our own maxConcurrentStreams queues the rest")
    func clientStreamLimit() async throws {
        let gauge = ConcurrencyGauge()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                gauge.enter()
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
                    gauge.leave()
                    responder.respond(echoResponse(request))
                }
            })
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 2, maxConcurrentStreams: 3)
        defer { client.shutdown() }
        let results = await sendAll(client, (0..<40).map { HTTP2Request(path: "/\($0)") })
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
        #expect(gauge.maximum <= 6)
    }
}
