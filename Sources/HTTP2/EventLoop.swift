import CSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One thread running epoll over non-blocking sockets, with timers and an inbox other threads feed.
///
/// Sockets are registered edge-triggered for both directions once, so readiness changes never need an
/// `epoll_ctl` call. Everything registered here (handlers, timers, flushes) belongs to the loop thread; other
/// threads reach it only through `execute`, whose closures are run in order at the end of the loop iteration.
/// The eventfd is written only when the loop may be asleep (the first submission after a drain), so a burst
/// of submissions costs one wake-up.
final class EventLoop: Sendable {
    /// State only the loop thread touches.
    final class State {
        var handlers: [UInt64: any EventHandler] = [:]
        var nextToken: UInt64 = 1
        var timers = TimerHeap()
        var flushes: [any FlushHandler] = []
        /// Scratch space for reads: the loop reads one socket at a time.
        let readBuffer: UnsafeMutableRawBufferPointer

        init(readBufferSize: Int) {
            readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferSize, alignment: 16)
        }

        deinit {
            readBuffer.deallocate()
        }
    }

    private struct Inbox {
        var work: [@Sendable () -> Void] = []
        /// The loop drained the inbox since the last wake-up: the next submitter must write the eventfd.
        var needsWake = true
        var stopRequested = false
    }

    /// The epoll token of the eventfd; handler tokens start at 1.
    private static let wakeToken: UInt64 = 0

    let name: String
    private let epollFD: Int32
    private let wakeFD: Int32
    private let inbox = Mutex(Inbox())
    /// The loop thread's `pthread_t` (0 before it runs).
    private let threadID = Atomic<UInt>(0)
    private let thread = Mutex<pthread_t?>(nil)
    nonisolated(unsafe) let state: State

    init(name: String, readBufferSize: Int = 256 * 1024) throws(HTTP2Error) {
        self.name = name
        do {
            epollFD = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        } catch {
            throw HTTP2Error(.connectFailed, "event loop: \(error)")
        }
        do {
            wakeFD = try systemCall("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
        } catch {
            close(epollFD)
            throw HTTP2Error(.connectFailed, "event loop: \(error)")
        }
        state = State(readBufferSize: readBufferSize)
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeToken
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event)

        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&handle, nil, heraldEventLoopThreadMain, context)
        guard result == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            close(wakeFD)
            close(epollFD)
            throw HTTP2Error(.connectFailed, "event loop: pthread_create failed (\(result))")
        }
        thread.withLock { $0 = handle }
    }

    /// True on the loop's own thread.
    var inEventLoop: Bool {
        threadID.load(ordering: .relaxed) == pthread_self()
    }

    /// Runs `work` on the loop thread, after the events of the current iteration. Callable from any thread
    /// (from the loop thread too: the work then runs later, never re-entrantly).
    ///
    /// - Returns: false, without running `work`, once `stop()` was called: the caller must then fail whatever
    ///   `work` would have completed. Work accepted before `stop()` always runs.
    @discardableResult
    func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            guard !inbox.stopRequested else {
                return (false, false)
            }
            inbox.work.append(work)
            let wake = inbox.needsWake
            inbox.needsWake = false
            return (true, wake)
        }
        if wake {
            wakeUp()
        }
        return accepted
    }

    /// Stops the loop after it ran the work already submitted, and joins the thread (unless called on it).
    /// Idempotent.
    func stop() {
        inbox.withLock { $0.stopRequested = true }
        wakeUp()
        guard
            let handle = thread.withLock({ handle -> pthread_t? in
                defer { handle = nil }
                return handle
            })
        else {
            return
        }
        if inEventLoop {
            // Stopped from its own thread (a completion handler): the thread ends after this iteration.
            pthread_detach(handle)
        } else {
            pthread_join(handle, nil)
        }
    }

    private func wakeUp() {
        _ = try? systemCall("eventfd_write") { eventfd_write(wakeFD, 1) }
    }

    // MARK: Loop-thread API

    /// Registers a non-blocking socket, edge-triggered for reads and writes. Returns the token to deregister it.
    func register(_ fd: Int32, _ handler: any EventHandler) throws(SystemCallError) -> UInt64 {
        let token = state.nextToken
        state.nextToken += 1
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        event.data.u64 = token
        _ = try systemCall("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) }
        state.handlers[token] = handler
        return token
    }

    /// Forgets a socket; call before closing it. Events already fetched for it are dropped.
    func deregister(_ fd: Int32, token: UInt64) {
        state.handlers[token] = nil
        _ = try? systemCall("epoll_ctl") { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
    }

    /// Calls `action` on the loop thread at `deadline` (monotonic nanoseconds) unless cancelled first.
    @discardableResult
    func schedule(at deadline: UInt64, _ action: @escaping () -> Void) -> LoopTimer {
        let timer = LoopTimer(deadline: deadline, action: action)
        state.timers.insert(timer)
        return timer
    }

    /// Asks for `handler.flush()` once the current batch of events and inbox work is handled.
    func requestFlush(_ handler: any FlushHandler) {
        state.flushes.append(handler)
    }

    // MARK: The loop

    fileprivate func run() {
        threadID.store(pthread_self(), ordering: .relaxed)
        let capacity: Int32 = 256
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(capacity))
        defer { events.deallocate() }
        var running = true
        while running {
            let timeout = pollTimeout()
            let count = (try? systemCall("epoll_wait") { epoll_wait(epollFD, events, capacity, timeout) }) ?? 0
            for index in 0..<Int(count) {
                let token = events[index].data.u64
                if token == Self.wakeToken {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                } else if let handler = state.handlers[token] {
                    handler.handleEvent(events[index].events)
                }
            }
            running = runInbox()
            runTimers()
            runFlushes()
        }
        state.timers.removeAll()
        state.handlers.removeAll()
        state.flushes.removeAll()
        close(wakeFD)
        close(epollFD)
    }

    /// Milliseconds until the next timer (rounded up), -1 without timers.
    private func pollTimeout() -> Int32 {
        guard state.flushes.isEmpty else {
            return 0
        }
        guard let deadline = state.timers.earliestDeadline else {
            return -1
        }
        let now = MonotonicClock.now()
        if deadline <= now {
            return 0
        }
        return Int32(clamping: (deadline - now + 999_999) / 1_000_000)
    }

    /// Runs the submitted work; false once a stop was requested (the work submitted before it still ran).
    private func runInbox() -> Bool {
        let (work, stop) = inbox.withLock { inbox -> ([@Sendable () -> Void], Bool) in
            let work = inbox.work
            inbox.work.removeAll(keepingCapacity: true)
            inbox.needsWake = true
            return (work, inbox.stopRequested)
        }
        for item in work {
            item()
        }
        return !stop
    }

    private func runTimers() {
        guard !state.timers.isEmpty else {
            return
        }
        let now = MonotonicClock.now()
        while let timer = state.timers.popDue(now: now) {
            timer.fire()
        }
    }

    private func runFlushes() {
        // Flushing may request more flushes (a closed connection wakes its owner): loop until quiet.
        var rounds = 0
        while !state.flushes.isEmpty, rounds < 8 {
            let pending = state.flushes
            state.flushes.removeAll(keepingCapacity: true)
            for handler in pending {
                handler.flush()
            }
            rounds += 1
        }
    }
}

/// The loop thread's entry point (a global function, so it inherits no actor isolation).
private func heraldEventLoopThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else {
        return nil
    }
    let loop = Unmanaged<EventLoop>.fromOpaque(context).takeRetainedValue()
    loop.run()
    return nil
}
