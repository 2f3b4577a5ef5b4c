import Foundation
import HTTP2
import HeraldTestSupport
import Testing

@Suite("Lifecycle")
struct LifecycleTests {
    @Test("shutdown fails queued and in-flight requests with .shutdown, later sends too")
    func shutdownFailsEverything() async throws {
        let held = ResponderStore()
        let server = try startServer(handler: ClosureHandler { _, responder in held.keep(responder) })
        defer { server.stop() }
        // Request and connect timeouts (and pings) an hour apart: only shutdown may fail these requests, however busy
        // the machine. In a full run on 2 cores this test can resume minutes late (the cooperative pool is 2 threads
        // wide and other suites' tests block on it): with 120 s, the requests had timed out before it looked.
        let client = try makeClient(
            for: server, connectionCount: 1, maxConcurrentStreams: 2,
            requestTimeout: .seconds(3_600), pingInterval: .seconds(3_600),
            connectTimeout: .seconds(3_600))

        let failures = Counter()
        let shutdownErrors = Counter()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<5 {
            client.send(HTTP2Request(path: "/\(index)")) { result in
                if case .failure(let error) = result {
                    failures.increment()
                    if error.code == .shutdown { shutdownErrors.increment() }
                }
                done.signal()
            }
        }
        #expect(await eventually(timeout: .seconds(60)) { held.count == 2 && client.statistics.queued == 3 })
        client.shutdown()
        for _ in 0..<5 { done.wait() }
        #expect(failures.current == 5)
        #expect(shutdownErrors.current == 5)
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/late"))
            Issue.record("expected .shutdown")
        } catch {
            #expect(error.code == .shutdown)
        }
        client.shutdown()
    }

    @Test("connect() opens the connections, TLS and SETTINGS done, before any request; again it opens none")
    func connectBeforeTheFirstRequest() async throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 2)
        defer { client.shutdown() }
        client.connect()
        #expect(await eventually(timeout: .seconds(60)) { client.statistics.connectionsReady == 2 })
        client.connect()
        #expect(try await client.send(HTTP2Request(path: "/")).status == 200)
        #expect(client.statistics.connectionsOpened == 2)
        #expect(client.statistics.connectionsReady == 2)
    }

    @Test("Server stop closes client connections; the client reconnects once a server listens again")
    func serverRestart() async throws {
        let server = try startServer(tls: false)
        let port = server.port
        let client = try makeClient(for: server, tls: false, connectionCount: 1)
        defer { client.shutdown() }
        #expect(try await client.send(HTTP2Request(path: "/")).status == 200)

        server.stop()
        server.stop()
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/"))
            Issue.record("expected a failure while no server listens")
        } catch {
            #expect([.connectionLost, .connectFailed].contains(error.code))
        }

        let restarted = try startServer(tls: false, port: port)
        defer { restarted.stop() }
        // Once the connect backoff of the failed attempts (if there were any) has passed: on a loaded
        // machine several attempts may fail and the wait grows to its 30 s cap, so allow two caps.
        var status: Int?
        _ = await eventually(timeout: .seconds(60), interval: .milliseconds(20)) {
            status = try? await client.send(HTTP2Request(path: "/")).status
            return status != nil
        }
        #expect(status == 200)
        #expect(client.statistics.connectionsReady == 2)
    }

    @Test("Several server loops share the port")
    func severalLoops() async throws {
        let server = try startServer(loopCount: 2)
        defer { server.stop() }
        let client = try makeClient(for: server, connectionCount: 4)
        defer { client.shutdown() }
        let results = await sendAll(client, (0..<200).map { HTTP2Request(path: "/\($0)") })
        #expect(results.allSatisfy { (try? $0.get().status) == 200 })
    }
}
