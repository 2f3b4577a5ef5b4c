#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM and SIGINT, handled without handlers: blocked in every thread (call `block()` before
/// any thread starts, so all inherit the mask) and taken synchronously with `sigwait`. This avoids
/// async-signal-safety concerns and main-actor closures called from other threads.
public enum TerminationSignals {
    private static func set() -> sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        return signals
    }

    /// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts later; ignores SIGPIPE.
    public static func block() {
        var signals = set()
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
    }

    /// Waits for SIGTERM or SIGINT; returns the signal number.
    @discardableResult
    public static func wait() -> Int32 {
        var signals = set()
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        return received
    }
}
