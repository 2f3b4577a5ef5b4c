/// A file descriptor's owner: told about readiness by the event loop (on the loop thread).
protocol EventHandler: AnyObject {
    /// `events` is the epoll mask (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, ...).
    func handleEvent(_ events: UInt32)
}

/// Something that wants to write what it gathered once the loop has handled a batch of events, so output produced
/// by many events (and answers submitted from other threads) goes out in one large write.
protocol FlushHandler: AnyObject {
    func flush()
}

/// A one-shot timer on the loop; cancelling only marks it (the heap drops it when its time comes).
final class LoopTimer {
    let deadline: UInt64
    private(set) var isCancelled = false
    fileprivate let action: () -> Void

    init(deadline: UInt64, action: @escaping () -> Void) {
        self.deadline = deadline
        self.action = action
    }

    func cancel() {
        isCancelled = true
    }

    func fire() {
        if !isCancelled {
            isCancelled = true
            action()
        }
    }
}
