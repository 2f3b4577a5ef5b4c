import Synchronization

/// At most one log line per `interval` for each kind of event, for events that come in floods: an overloaded
/// intake refuses hundreds of requests a second, and a line for each would spend its CPU on writing them when it
/// has least to spare. The line written after skipped ones says how many were skipped, so the log still adds up;
/// the metrics count every event.
public final class LogThrottle: Sendable {
    private struct Window {
        var writtenAt: ContinuousClock.Instant
        var skipped: Int
    }

    private let interval: Duration
    private let windows = Mutex<[String: Window]>([:])

    public init(interval: Duration = .seconds(1)) {
        self.interval = interval
    }

    /// nil when this event's line is skipped; otherwise the line is written, and this is the number of lines of its
    /// kind skipped since the last one written.
    public func admit(_ kind: String, now: ContinuousClock.Instant = .now) -> Int? {
        windows.withLock { windows in
            if var window = windows[kind], now - window.writtenAt < interval {
                window.skipped += 1
                windows[kind] = window
                return nil
            }
            let skipped = windows[kind]?.skipped ?? 0
            windows[kind] = Window(writtenAt: now, skipped: 0)
            return skipped
        }
    }
}
