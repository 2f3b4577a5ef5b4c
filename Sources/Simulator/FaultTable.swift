import Synchronization

/// The faults in force, by device token (APNs) or FCM target.
///
/// Looked up on every request, so an empty table (the benchmark, most tests) costs one relaxed
/// atomic load and no String allocation for the key.
final class FaultTable: Sendable {
    private let faults = Mutex<[String: SimulatorFault]>([:])
    private let count = Atomic<Int>(0)

    func set(_ fault: SimulatorFault, token: String) {
        faults.withLock { table in
            table[token] = fault
            count.store(table.count, ordering: .relaxed)
        }
    }

    /// Removes the fault of one token; true if there was one.
    @discardableResult
    func remove(token: String) -> Bool {
        faults.withLock { table in
            let removed = table.removeValue(forKey: token) != nil
            count.store(table.count, ordering: .relaxed)
            return removed
        }
    }

    /// Removes every fault; returns how many there were.
    @discardableResult
    func removeAll() -> Int {
        faults.withLock { table in
            let removed = table.count
            table.removeAll()
            count.store(0, ordering: .relaxed)
            return removed
        }
    }

    /// Every fault in force, sorted by token.
    func all() -> [(token: String, fault: SimulatorFault)] {
        faults.withLock { table in table.map { ($0.key, $0.value) } }.sorted { $0.token < $1.token }
    }

    /// The fault for `token`, counting this use: a fault with `times` left at 1 is removed.
    func take<S: StringProtocol>(token: S) -> SimulatorFault? {
        guard count.load(ordering: .relaxed) > 0 else { return nil }
        let key = String(token)
        return faults.withLock { table -> SimulatorFault? in
            guard let fault = table[key] else { return nil }
            if let times = fault.times {
                if times <= 1 {
                    table.removeValue(forKey: key)
                    count.store(table.count, ordering: .relaxed)
                } else {
                    table[key]?.times = times - 1
                }
            }
            return fault
        }
    }
}
