/// Exponential backoff: `base x 2^(failures - 1)`, at most `maximum`. One formula for every
/// place that waits longer after each failure (delivery retries, background services after an
/// error, paused upstreams); callers that want jitter scale the cap by a random factor.
public struct ExponentialBackoff: Sendable, Equatable {
    public var base: Duration
    public var maximum: Duration

    public init(base: Duration, maximum: Duration) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (1 = the first); zero failures wait nothing.
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        let exponent = min(failures - 1, 40)
        let seconds = (base / .seconds(1)) * Double(1 << exponent)
        return min(maximum, .milliseconds(Int64(min(seconds, 1e12) * 1000)))
    }
}
