/// A binary min-heap of timers ordered by deadline, then by insertion order (equal deadlines fire FIFO).
struct TimerHeap {
    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let timer: LoopTimer
    }

    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest deadline, cancelled timers included (firing those is a no-op).
    var earliestDeadline: UInt64? { entries.first?.deadline }

    mutating func insert(_ timer: LoopTimer) {
        entries.append(Entry(deadline: timer.deadline, sequence: nextSequence, timer: timer))
        nextSequence &+= 1
        siftUp(entries.count - 1)
    }

    /// Removes and returns the earliest timer if its deadline is at or before `now`.
    mutating func popDue(now: UInt64) -> LoopTimer? {
        guard let first = entries.first, first.deadline <= now else {
            return nil
        }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first.timer
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        let x = entries[a], y = entries[b]
        return x.deadline < y.deadline || (x.deadline == y.deadline && x.sequence < y.sequence)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let count = entries.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { return }
            var smallest = left
            if left + 1 < count, less(left + 1, left) {
                smallest = left + 1
            }
            guard less(smallest, parent) else { return }
            entries.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
