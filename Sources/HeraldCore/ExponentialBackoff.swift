/// How long to wait after consecutive failures of the same thing: `base x 2^(failures - 1)`, at
/// most `maximum`. One formula for every place that waits longer after each failure (delivery
/// retries, background services after an error, paused upstreams, failed connects to an upstream,
/// failed OAuth2 exchanges). Pure: callers that want jitter supply the randomness.
public struct ExponentialBackoff: Sendable, Equatable {
    /// The step after the first failure.
    public var base: Duration
    /// No step is longer.
    public var maximum: Duration

    public init(base: Duration, maximum: Duration) {
        self.base = base
        self.maximum = maximum
    }

    /// The step after `failures` consecutive failures: zero for none, then base, 2 x base, ... up
    /// to `maximum`.
    public func step(afterFailures failures: Int) -> Duration {
        guard failures > 0, base > .zero else { return .zero }
        // 2^40 x any sensible base is far beyond every maximum: stop doubling there so nothing overflows.
        var step = base
        for _ in 1..<min(failures, 40) {
            step *= 2
            if step >= maximum { break }
        }
        return min(step, max(maximum, .zero))
    }

    /// A jittered wait after `failures` consecutive failures: uniformly in [step/2, step], so the
    /// wait never collapses to nothing and many clients failing together spread out. `random` is
    /// uniform in 0..<1.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let step = step(afterFailures: failures)
        let fraction = 0.5 + 0.5 * min(max(random, 0), 1)
        return step * fraction
    }
}
