import Foundation
import HTTP2
import HeraldCore
import HeraldTestSupport
import Synchronization
import Testing

@testable import Simulator

/// `--latency-ms N[,JITTER]`: APNs, FCM and token-endpoint answers leave N ms (plus up to JITTER) after their
/// request arrived, each stream on its own timer; the control API is answered at once.
///
/// An answer can never come before its latency, so lower bounds are exact. A machine busy with the whole suite can
/// stall any answer by seconds, so no upper bound is absolute: concurrency is shown against what one stream after
/// another would take (50 x the latency), and "not delayed" by a latency far longer than any stall.
@Suite("Latency")
struct LatencyTests {
    static let latency = SimulatorLatency(milliseconds: 100)
    static let wait = Duration.milliseconds(100)

    /// How long `body` takes.
    static func timed<T>(_ body: () async throws -> T) async rethrows -> (value: T, elapsed: Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }

    /// Opens the harness's connection with a request that is not delayed, so later timings are the simulator's
    /// and not the TLS handshake's.
    static func connect(_ harness: SimulatorHarness) async throws {
        #expect(try await harness.control("GET", "/sim/stats").status == 200)
    }

    @Test func anAPNsAnswerWaitsTheLatency() async throws {
        let harness = try SimulatorHarness(latency: Self.latency)
        try await Self.connect(harness)
        let (response, elapsed) = try await Self.timed { try await harness.apns() }
        #expect(response.status == 200)
        #expect(elapsed >= Self.wait)
    }

    /// What `sendTogether` saw: when the sends began, and each request's status (nil: it failed) and the moment its
    /// answer arrived, in the order of `requests`.
    struct Answers {
        let start: ContinuousClock.Instant
        let results: [(status: Int?, at: ContinuousClock.Instant)]
    }

    /// Sends `requests` from this thread without awaiting between them, so they go out together, and waits for
    /// every answer. Each answer is stamped in its completion, on the client's own loop thread: the cooperative
    /// pool, which the rest of the suite keeps busy (its tasks have waited minutes to run), plays no part in the
    /// timings.
    static func sendTogether(_ client: HTTP2Client, _ requests: [HTTP2Request]) async -> Answers {
        final class Stamps: Sendable {
            let results: Mutex<[(status: Int?, at: ContinuousClock.Instant)?]>
            let left: Mutex<Int>
            init(_ count: Int) {
                results = Mutex(Array(repeating: nil, count: count))
                left = Mutex(count)
            }
        }
        let stamps = Stamps(requests.count)
        let start = ContinuousClock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for (index, request) in requests.enumerated() {
                client.send(request) { result in
                    let at = ContinuousClock.now
                    stamps.results.withLock { $0[index] = ((try? result.get())?.status, at) }
                    if stamps.left.withLock({ left -> Int in
                        left -= 1; return left
                    }) == 0 {
                        continuation.resume()
                    }
                }
            }
        }
        return Answers(start: start, results: stamps.results.withLock { $0.map { $0! } })
    }

    func apnsRequest(_ harness: SimulatorHarness) -> HTTP2Request {
        HTTP2Request(
            path: "/3/device/\(SimulatorHarness.deviceToken)", headers: harness.apnsHeaders(),
            body: SimulatorHarness.payload)
    }

    @Test("50 concurrent streams on one connection each wait the latency, all at once")
    func concurrentStreamsWaitTogether() async throws {
        // One stream after another would take 50 x 1 s: the bound below, half of that, leaves 24 s for the machine's
        // stalls of the two loop threads (the stamps do not wait on the cooperative pool), and the control request
        // would have to reach the simulator a whole second after the pushes sent just before it to come back last.
        let harness = try SimulatorHarness(latency: SimulatorLatency(milliseconds: 1000))
        try await Self.connect(harness)
        let control = HTTP2Request(method: "GET", path: "/sim/stats")
        let requests = Array(repeating: apnsRequest(harness), count: 50) + [control]
        let answers = await Self.sendTogether(harness.client, requests)
        let pushes = answers.results.dropLast()
        let controlAnswer = try #require(answers.results.last)
        #expect(pushes.map(\.status) == Array(repeating: 200, count: 50))
        #expect(pushes.allSatisfy { $0.at - answers.start >= .seconds(1) })
        // Sent after the 50 on the same connection, answered before any of them: the loop was free while they waited.
        #expect(controlAnswer.status == 200)
        #expect(pushes.allSatisfy { controlAnswer.at < $0.at })
        let last = try #require(pushes.map(\.at).max())
        #expect(last - answers.start < .seconds(1) * 25)
        #expect(harness.client.statistics.connectionsOpened == 1)
        #expect(harness.simulator.received().count == 50)
    }

    @Test func tokenEndpointAndFCMWaitTheLatency() async throws {
        let harness = try SimulatorHarness(latency: Self.latency)
        try await Self.connect(harness)
        let (token, tokenElapsed) = try await Self.timed { try await harness.accessToken() }
        #expect(tokenElapsed >= Self.wait)
        #expect(harness.simulator.statistics.token[200] == 1)
        let (response, fcmElapsed) = try await Self.timed {
            try await harness.fcm(message: #"{"message":{"token":"device-1"}}"#, accessToken: token)
        }
        #expect(response.status == 200)
        #expect(fcmElapsed >= Self.wait)
    }

    @Test func channelManagementAndBroadcastsWaitTheLatency() async throws {
        let harness = try SimulatorHarness(channels: true, latency: Self.latency)
        let (channel, createElapsed) = try await Self.timed { try await harness.createChannel() }
        #expect(createElapsed >= Self.wait)
        try await Self.connect(harness)
        let (response, elapsed) = try await Self.timed {
            try await harness.client.send(
                HTTP2Request(
                    path: "/4/broadcasts/apps/\(SimulatorHarness.bundleID)",
                    headers: [
                        HTTP2Header("authorization", "bearer \(harness.jwt)"),
                        HTTP2Header("apns-push-type", "liveactivity"), HTTP2Header("apns-channel-id", channel),
                    ],
                    body: BroadcastTests.update))
        }
        #expect(response.status == 200)
        #expect(elapsed >= Self.wait)
    }

    @Test func theControlAPIIsNotDelayed() async throws {
        // A minute (the most there is): the control API answers while a push sent just before it still waits. All
        // three requests go out from this thread without a suspension between them, and whether the push was
        // answered is read on the client's loop thread as each control answer arrives: the test's own task may
        // resume minutes later in a busy suite.
        let harness = try SimulatorHarness(latency: SimulatorLatency(milliseconds: 60_000))
        try await Self.connect(harness)
        final class Seen: Sendable {
            let pushAnswered = Atomic<Bool>(false)
            /// Per control request: its status, and whether the push had been answered when it arrived.
            let controls = Mutex<[(status: Int?, pushAnswered: Bool)]>([])
        }
        let seen = Seen()
        let paths = ["/sim/stats", "/sim/received"]
        let controls = await withCheckedContinuation { continuation in
            harness.client.send(apnsRequest(harness)) { _ in
                seen.pushAnswered.store(true, ordering: .sequentiallyConsistent)
            }
            for path in paths {
                harness.client.send(HTTP2Request(method: "GET", path: path)) { result in
                    let pushAnswered = seen.pushAnswered.load(ordering: .sequentiallyConsistent)
                    let all = seen.controls.withLock { controls -> [(status: Int?, pushAnswered: Bool)]? in
                        controls.append(((try? result.get())?.status, pushAnswered))
                        return controls.count == paths.count ? controls : nil
                    }
                    if let all { continuation.resume(returning: all) }
                }
            }
        }
        #expect(controls.map(\.status) == [200, 200])
        #expect(controls.allSatisfy { !$0.pushAnswered })
    }

    @Test func aFaultsDelayAddsToTheLatency() async throws {
        let harness = try SimulatorHarness(latency: Self.latency)
        try await Self.connect(harness)
        harness.simulator.setFault(SimulatorFault(status: 500, delayMs: 200), token: SimulatorHarness.deviceToken)
        let (response, elapsed) = try await Self.timed { try await harness.apns() }
        #expect(response.status == 500)
        // Added, not the larger of the two.
        #expect(elapsed >= .milliseconds(300))
    }

    @Test("a record's receivedAt is when the request arrived, not when it was answered")
    func recordsKeepTheArrival() async throws {
        let harness = try SimulatorHarness(
            requestTimeout: .seconds(30), latency: SimulatorLatency(milliseconds: 10_000))
        try await Self.connect(harness)
        let arrival = harness.clock.now
        let (statuses, answered) = AsyncStream.makeStream(of: Int?.self)
        harness.client.send(apnsRequest(harness)) { result in
            answered.yield((try? result.get())?.status)
            answered.finish()
        }
        // This thread is held from the send to the clock's move: a task resumed on the cooperative pool, which the
        // rest of the suite keeps busy, could wait out the ten seconds the answer is held.
        try waitFor("the push to arrive") { harness.simulator.answersHeld == 1 }
        harness.clock.advance(by: 60)
        #expect(harness.simulator.answersWaiting == 1)
        var answers = statuses.makeAsyncIterator()
        #expect(await answers.next() == 200)
        let record = try #require(harness.simulator.received().first)
        // Within a second of the arrival (records keep microseconds), not the minute the clock moved meanwhile.
        #expect(abs(record.receivedAt.timeIntervalSince(arrival)) < 1)
    }

    @Test func jitterStaysWithinItsBounds() async throws {
        let latency = SimulatorLatency(milliseconds: 100, jitterMilliseconds: 100)
        let samples = (0..<2000).map { _ in latency.sample() }
        #expect(samples.allSatisfy { (100...200).contains($0) })
        // Uniform: both halves of the range are drawn (all 2000 in one half has a chance of 2^-1999).
        #expect(samples.contains { $0 < 150 } && samples.contains { $0 > 150 })

        let harness = try SimulatorHarness(latency: latency)
        try await Self.connect(harness)
        for _ in 0..<5 {
            let (response, elapsed) = try await Self.timed { try await harness.apns() }
            #expect(response.status == 200)
            #expect(elapsed >= Self.wait)
        }
    }

    @Test func noLatencyByDefault() {
        #expect(SimulatorConfiguration().latency == .zero)
        #expect(SimulatorLatency.zero.sample() == 0)
    }
}
