import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Testing

@Suite("Exponential backoff as a value")
struct ExponentialBackoffTests {
    let backoff = ExponentialBackoff(base: .milliseconds(250), maximum: .seconds(30))

    @Test("Steps double from the base up to the maximum")
    func stepsDoubleUpToTheMaximum() {
        #expect(backoff.step(afterFailures: 0) == .zero)
        #expect(backoff.step(afterFailures: 1) == .milliseconds(250))
        #expect(backoff.step(afterFailures: 2) == .milliseconds(500))
        #expect(backoff.step(afterFailures: 3) == .seconds(1))
        #expect(backoff.step(afterFailures: 8) == .seconds(30))
        #expect(backoff.step(afterFailures: 7) == .seconds(16))
        #expect(backoff.step(afterFailures: 1_000_000) == .seconds(30))
        #expect(backoff.step(afterFailures: .max) == .seconds(30))
    }

    @Test("The wait is jittered within the upper half of the step")
    func jitterStaysInTheUpperHalf() {
        #expect(backoff.delay(afterFailures: 3, random: 0) == .milliseconds(500))
        #expect(backoff.delay(afterFailures: 3, random: 0.5) == .milliseconds(750))
        #expect(backoff.delay(afterFailures: 3, random: 1) == .seconds(1))
        #expect(backoff.delay(afterFailures: 0, random: 0.7) == .zero)
        // Out-of-range randomness is clamped.
        #expect(backoff.delay(afterFailures: 3, random: 7) == .seconds(1))
        #expect(backoff.delay(afterFailures: 3, random: -1) == .milliseconds(500))
        #expect(ExponentialBackoff(base: .zero, maximum: .seconds(1)).delay(afterFailures: 5, random: 1) == .zero)
    }
}

@Suite("Connection attempts back off")
struct ConnectBackoffTests {
    /// A client for a port where nothing listens (or will listen later).
    func client(port: UInt16, backoff: ExponentialBackoff) throws -> HTTP2Client {
        try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "http://127.0.0.1:\(port)", connectionCount: 1, connectTimeout: .seconds(5),
                requestTimeout: .seconds(5), connectBackoff: backoff))
    }

    @Test("A refusing port: sends inside the backoff fail at once with the connect error, without connecting")
    func refusedConnectsAreNotRepeatedPerRequest() async throws {
        // A wait of at least 30 minutes: no second attempt within this test, however loaded the machine (a
        // 30 s wait was once outlasted by the 40 sends on a machine running three suites at once).
        let refusing = RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let client = try client(
            port: refusing.port,
            backoff: ExponentialBackoff(base: .seconds(3600), maximum: .seconds(3600)))
        defer { client.shutdown() }
        var errors: [HTTP2Error] = []
        for index in 0..<40 {
            do throws(HTTP2Error) {
                _ = try await client.send(HTTP2Request(path: "/\(index)"))
                Issue.record("nothing listens there")
            } catch {
                errors.append(error)
            }
        }
        #expect(errors.allSatisfy { $0.code == .connectFailed })
        #expect(errors.dropFirst().allSatisfy { $0.message.contains("connect backoff") })
        let statistics = client.statistics
        #expect(statistics.connectionsOpened == 1)
        #expect(statistics.requestsFailedInConnectBackoff == 39)
        #expect(statistics.consecutiveConnectFailures == 1)
        #expect((1_800_000...3_600_000).contains(statistics.connectBackoffMilliseconds))
    }

    @Test("Consecutive failures wait exponentially longer, up to the maximum")
    func waitsGrowWithEachFailure() throws {
        // Waits of 100 ms to 1.6 s, and sends made from this thread, blocking on each answer: an async loop here
        // resumed late on a loaded CI (the cooperative pool busy with other suites) and missed every window.
        let backoff = ExponentialBackoff(base: .milliseconds(200), maximum: .milliseconds(1_600))
        let refusing = RefusingPort()
        defer { withExtendedLifetime(refusing) {} }
        let client = try client(port: refusing.port, backoff: backoff)
        defer { client.shutdown() }
        // Keep sending until the n-th attempt failed; between attempts the sends fail at once.
        for failures in 1...6 {
            try waitFor("attempt \(failures) failed", timeout: .seconds(30), interval: .milliseconds(5)) {
                if client.statistics.consecutiveConnectFailures >= failures { return true }
                sendWaiting(client, HTTP2Request(path: "/"))
                return false
            }
            let statistics = client.statistics
            #expect(statistics.consecutiveConnectFailures == failures)
            // The wait chosen after this failure: in the upper half of 200 ms x 2^(n-1), capped at 1.6 s.
            let step = Int(backoff.step(afterFailures: failures) / .milliseconds(1))
            #expect((step / 2...step).contains(statistics.connectBackoffMilliseconds), "after \(failures) failures")
        }
        let statistics = client.statistics
        #expect(statistics.connectionsOpened == 6)
        #expect(statistics.requestsFailedInConnectBackoff >= 1)
    }

    /// Sends on the calling thread and blocks until the answer (it comes on the client's own event-loop thread).
    func sendWaiting(_ client: HTTP2Client, _ request: HTTP2Request) {
        let answered = DispatchSemaphore(value: 0)
        client.send(request) { _ in answered.signal() }
        answered.wait()
    }

    @Test("A connection that becomes ready resets the backoff")
    func successResetsTheBackoff() async throws {
        // The port stays bound (refusing) until the server listens on it: freed earlier, another test's outgoing
        // connection could get it as its own port meanwhile, and the server could not listen on it.
        let refusing = RefusingPort()
        let port = refusing.port
        let client = try client(port: port, backoff: ExponentialBackoff(base: .milliseconds(50), maximum: .seconds(1)))
        defer { client.shutdown() }
        // Sends from this thread (as waitsGrowWithEachFailure does) until two attempts failed.
        try waitFor("two failed attempts", timeout: .seconds(60), interval: .milliseconds(20)) {
            if client.statistics.consecutiveConnectFailures >= 2 { return true }
            sendWaiting(client, HTTP2Request(path: "/"))
            return false
        }

        let server = try withExtendedLifetime(refusing) { try startServer(tls: false, port: Int(port)) }
        defer { server.stop() }
        // The next attempt after the wait reaches the server.
        #expect(
            await eventually(timeout: .seconds(60), interval: .milliseconds(20)) {
                (try? await client.send(HTTP2Request(path: "/")).status) == 200
            })
        #expect(client.statistics.consecutiveConnectFailures == 0)
        #expect(client.statistics.connectBackoffMilliseconds == 0)
        #expect(client.statistics.connectionsReady == 1)
        #expect(try await client.send(HTTP2Request(path: "/again")).status == 200)
    }
}
