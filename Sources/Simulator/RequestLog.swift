import Synchronization

/// The requests answered, newest last, at most `limit` of them (a ring buffer: the oldest is
/// overwritten), and the statistics, which count everything.
///
/// One short critical section per request; readers copy the entries out under the lock and
/// build their answer outside it.
final class RequestLog: Sendable {
    private struct State {
        var entries: [RecordEntry] = []
        /// Once the buffer is full: the index of the oldest entry (the next to overwrite).
        var head = 0
        var statistics = SimulatorStatistics()
        /// Answers held back for their latency or a fault's delay, not yet sent.
        var waiting = 0
        /// Answers ever held back: never goes down, so a reader that looks late still sees one was held.
        var held = 0
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Records an answered APNs or FCM request and counts it.
    func append(_ entry: RecordEntry) {
        state.withLock { state in
            state.statistics.add(entry.service, status: entry.status)
            guard limit > 0 else { return }
            if state.entries.count < limit {
                state.entries.append(entry)
            } else {
                state.entries[state.head] = entry
                state.head = state.head + 1 == limit ? 0 : state.head + 1
            }
        }
    }

    /// Counts an answer that is not recorded (the token endpoint).
    func count(_ service: SimulatorService, status: Int) {
        state.withLock { $0.statistics.add(service, status: status) }
    }

    /// Counts a request a fault dropped or left unprocessed with GOAWAY.
    func countUnanswered(_ service: SimulatorService, goAway: Bool) {
        state.withLock { $0.statistics.addUnanswered(service, goAway: goAway) }
    }

    /// The entries, oldest first.
    func entries() -> [RecordEntry] {
        state.withLock { state in
            guard state.head > 0 else { return state.entries }
            return Array(state.entries[state.head...]) + state.entries[..<state.head]
        }
    }

    /// Forgets the recorded requests (not the statistics); returns how many there were.
    @discardableResult
    func clear() -> Int {
        state.withLock { state in
            let count = state.entries.count
            state.entries = []
            state.head = 0
            return count
        }
    }

    var statistics: SimulatorStatistics { state.withLock { $0.statistics } }

    /// Counts an answer held back for its wait (`AnswerScheduler`), until `released()`.
    func held() {
        state.withLock { state in
            state.waiting += 1
            state.held += 1
        }
    }

    /// The held answer's wait is over.
    func released() {
        state.withLock { $0.waiting -= 1 }
    }

    var waiting: Int { state.withLock { $0.waiting } }

    var heldTotal: Int { state.withLock { $0.held } }

    func resetStatistics() {
        state.withLock { $0.statistics = SimulatorStatistics() }
    }
}
