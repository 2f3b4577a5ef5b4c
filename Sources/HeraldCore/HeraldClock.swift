import Foundation

/// The time source of everything that depends on the wall clock (JWT issue times, access-token
/// expiry, backoff, leases): injected so tests can move time without sleeping.
public protocol HeraldClock: Sendable {
    var now: Date { get }
}

/// The real clock.
public struct SystemClock: HeraldClock {
    public init() {}
    public var now: Date { Date() }
}

extension Duration {
    /// Seconds as a `TimeInterval`, for arithmetic with a clock's `Date`s (token ages, backoff deadlines).
    public var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
