import Foundation
import HeraldCore
import HeraldTestSupport
import ServiceSupport
import Synchronization
import Testing

/// The one shape of background loops: steps until stopped, backs off after failures and resets
/// after a success, sleeps that stop() and wake() cut short, and a stop that does not wait forever.
@Suite struct BackgroundServiceTests {
    let logger = Logger(component: "test", minimum: .error)

    final class Counter: Sendable {
        let steps = Atomic<Int>(0)
        let failuresSeen = Mutex<[Int]>([])
    }

    @Test func aFailingStepBacksOffExponentiallyAndASuccessResetsTheCount() throws {
        let counter = Counter()
        let stamps = Mutex<[ContinuousClock.Instant]>([])
        let backoff = ExponentialBackoff(base: .milliseconds(40), maximum: .milliseconds(160))
        let service = BackgroundService(
            .init(name: "test-failing", backoff: backoff), logger: logger,
            onError: { _ in counter.failuresSeen.withLock { $0.append(0) } }
        ) { service in
            let step = counter.steps.add(1, ordering: .relaxed).newValue
            stamps.withLock { $0.append(.now) }
            if step == 6 { return }  // one success among failures
            if step > 8 { service.sleep(for: .seconds(10)); return }
            struct Failure: Error {}
            throw Failure()
        }
        service.start()
        try waitFor("nine steps", timeout: .seconds(10), interval: .milliseconds(10)) {
            counter.steps.load(ordering: .relaxed) >= 9
        }
        #expect(service.stop(deadline: Date().addingTimeInterval(5)))
        let times = stamps.withLock { $0 }
        #expect(times.count >= 9)
        // Gaps after failures 1-4 are at least 40, 80, 160, 160 ms (capped); after the success the
        // count restarts at 40 ms.
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps[0] >= .milliseconds(40))
        #expect(gaps[1] >= .milliseconds(80))
        #expect(gaps[2] >= .milliseconds(160))
        #expect(gaps[3] >= .milliseconds(160))
        #expect(counter.failuresSeen.withLock { $0.count } == 7)
        #expect(service.failures == 0)
    }

    @Test func stopCutsASleepShortAndWakeEndsIt() throws {
        let counter = Counter()
        let service = BackgroundService(.init(name: "test-sleeper"), logger: logger) { service in
            counter.steps.add(1, ordering: .relaxed)
            service.sleep(for: .seconds(60))
        }
        service.start()
        try waitFor("the first step", timeout: .seconds(10), interval: .milliseconds(10)) {
            counter.steps.load(ordering: .relaxed) >= 1
        }
        service.wake()
        try waitFor("a second step, woken", timeout: .seconds(10), interval: .milliseconds(10)) {
            counter.steps.load(ordering: .relaxed) >= 2
        }
        let started = Date()
        #expect(service.stop())
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(service.isStopping)
        // Stopping again (a second shutdown path) returns at once.
        #expect(service.stop(deadline: Date().addingTimeInterval(5)))
    }

    @Test func stopGivesUpAtItsDeadlineWhenAStepIsStuck() throws {
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let service = BackgroundService(.init(name: "test-stuck"), logger: logger) { _ in
            entered.signal()
            release.wait()
        }
        service.start()
        entered.wait()
        #expect(!service.stop(deadline: Date().addingTimeInterval(0.2)))
        release.signal()
    }

    @Test func configurationIsValidated() {
        #expect(throws: ConfigurationError.self) {
            try BackgroundService.Configuration(name: "", backoff: .init(base: .seconds(1), maximum: .seconds(2)))
                .validate()
        }
        #expect(throws: ConfigurationError.self) {
            try BackgroundService.Configuration(name: "x", backoff: .init(base: .seconds(2), maximum: .seconds(1)))
                .validate()
        }
    }

    @Test func exponentialBackoffDoublesUpToItsMaximum() {
        let backoff = ExponentialBackoff(base: .milliseconds(100), maximum: .seconds(1))
        #expect(backoff.step(afterFailures: 0) == .zero)
        #expect(backoff.step(afterFailures: 1) == .milliseconds(100))
        #expect(backoff.step(afterFailures: 3) == .milliseconds(400))
        #expect(backoff.step(afterFailures: 10) == .seconds(1))
        #expect(backoff.step(afterFailures: 10_000) == .seconds(1))
    }
}
