import Synchronization

/// Values by device token or FCM target, set through the control API and read on every request.
///
/// Looked up on the hot path, so an empty table (the benchmark, most tests) costs one relaxed atomic load and
/// no String allocation for the key.
final class TokenTable<Value: Sendable>: Sendable {
    private let table = Mutex<[String: Value]>([:])
    private let count = Atomic<Int>(0)

    /// Nothing is set (one relaxed load).
    var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Sets the value of `token`, replacing whatever it had.
    func set(_ value: Value, token: String) {
        withLock { $0[token] = value }
    }

    /// Removes the value of one token; true if it had one.
    @discardableResult
    func remove(token: String) -> Bool {
        withLock { $0.removeValue(forKey: token) != nil }
    }

    /// Removes every value; returns how many there were.
    @discardableResult
    func removeAll() -> Int {
        withLock { table in
            defer { table.removeAll() }
            return table.count
        }
    }

    /// Every token and its value, sorted by token.
    func all() -> [(token: String, value: Value)] {
        table.withLock { table in table.map { ($0.key, $0.value) } }.sorted { $0.token < $1.token }
    }

    /// Runs `body` on the table under its lock, and keeps the count in step with what it leaves.
    func withLock<Result>(_ body: (inout [String: Value]) -> Result) -> Result {
        table.withLock { table in
            defer { count.store(table.count, ordering: .relaxed) }
            return body(&table)
        }
    }
}
