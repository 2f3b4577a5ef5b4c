import Foundation
import Synchronization

/// Runs one write at a time on its own thread, so the next batch is read, checked, resolved and
/// rendered (on the caller's thread and connection) while the previous one commits (on the
/// writer's). libpq calls block: they run on a thread of their own, not on a shared pool.
final class BackfillWriter<Output: Sendable>: @unchecked Sendable {
    private let lock = NSCondition()
    private var job: (@Sendable () throws -> Output)?
    private var result: Result<Output, any Error>?
    private var stopping = false
    private var thread: Thread?

    init() {
        let thread = Thread { [unowned self] in self.loop() }
        thread.name = "backfill-writer"
        self.thread = thread
        thread.start()
    }

    /// Hands a write over; the previous one must have been collected with `wait()`.
    func submit(_ write: @escaping @Sendable () throws -> Output) {
        lock.lock()
        precondition(job == nil && result == nil, "one write at a time")
        job = write
        lock.signal()
        lock.unlock()
    }

    /// The result of the write submitted last (its error rethrown).
    func wait() throws -> Output {
        lock.lock()
        while result == nil { lock.wait() }
        let finished = result!
        result = nil
        lock.unlock()
        return try finished.get()
    }

    /// Ends the thread once the current write (if any) is done.
    func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        lock.unlock()
    }

    private func loop() {
        while true {
            lock.lock()
            while job == nil && !stopping { lock.wait() }
            guard let write = job else {
                lock.unlock()
                return
            }
            lock.unlock()
            let outcome = Result { try write() }
            lock.lock()
            job = nil
            result = outcome
            lock.broadcast()
            lock.unlock()
        }
    }
}
