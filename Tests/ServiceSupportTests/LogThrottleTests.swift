import ServiceSupport
import Testing

@Suite("The log throttle")
struct LogThrottleTests {
    @Test("one line a second for each kind; the next line written says how many were skipped")
    func oneLineASecond() {
        let throttle = LogThrottle(interval: .seconds(1))
        let start = ContinuousClock.now
        #expect(throttle.admit("overloaded", now: start) == 0)
        for k in 1...99 {
            #expect(throttle.admit("overloaded", now: start + .milliseconds(k * 5)) == nil)
        }
        // Another kind has its own window.
        #expect(throttle.admit("too_many_connections", now: start + .milliseconds(10)) == 0)
        #expect(throttle.admit("overloaded", now: start + .milliseconds(1_000)) == 99)
        #expect(throttle.admit("overloaded", now: start + .milliseconds(1_500)) == nil)
        #expect(throttle.admit("overloaded", now: start + .milliseconds(5_000)) == 1)
        #expect(throttle.admit("overloaded", now: start + .milliseconds(9_000)) == 0)
    }
}
