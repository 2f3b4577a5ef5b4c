#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on the monotonic clock: the event loop's notion of time (timers, deadlines, idleness).
enum MonotonicClock {
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }
}

extension Duration {
    /// Whole nanoseconds, clamped at zero (negative durations mean "now").
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 {
            return 0
        }
        return UInt64(seconds) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
