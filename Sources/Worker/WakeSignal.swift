import Foundation

/// Wakes the claim loop. Two reasons are kept apart: new work (NOTIFY, a scheduled row coming
/// due, shutdown) and freed capacity (a completed batch). A loop waiting for work is not woken by
/// every completion, so an idle queue under steady traffic costs no empty claims.
final class WakeSignal: @unchecked Sendable {
    enum Reason { case work, capacity }

    private let condition = NSCondition()
    private var work = false
    private var capacity = false
    /// Threads waiting now, by the reasons they wait for: a signal no one waits for is kept without waking
    /// anyone (a thread switch for nothing, every completed batch).
    private var waiting: [Reason: Int] = [:]

    func signal(_ reason: Reason) {
        condition.lock()
        switch reason {
        case .work: work = true
        case .capacity: capacity = true
        }
        if waiting[reason, default: 0] > 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Waits until one of `reasons` was signalled or `deadline` passed; clears what it consumed.
    /// Returns true when signalled.
    @discardableResult
    func wait(for reasons: Set<Reason>, until deadline: Date) -> Bool {
        condition.lock()
        for reason in reasons { waiting[reason, default: 0] += 1 }
        defer {
            for reason in reasons { waiting[reason, default: 0] -= 1 }
            condition.unlock()
        }
        while true {
            let signalled = (reasons.contains(.work) && work) || (reasons.contains(.capacity) && capacity)
            if signalled {
                if reasons.contains(.work) { work = false }
                if reasons.contains(.capacity) { capacity = false }
                return true
            }
            if !condition.wait(until: deadline) { return false }
        }
    }
}
