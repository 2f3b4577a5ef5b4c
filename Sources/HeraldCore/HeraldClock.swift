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
