import Foundation
import HeraldCore
import Synchronization

/// A clock tests move by hand: passed where production code takes a `HeraldClock` (or its `now`), so a test of
/// expiry, renewal or backoff moves time instead of sleeping through it.
public final class TestClock: HeraldClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date()) {
        current = Mutex(start)
    }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func advance(_ duration: Duration) {
        advance(by: duration / .seconds(1))
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
