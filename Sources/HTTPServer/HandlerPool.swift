import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Dedicated threads that run handlers for suspended connections, so a blocking handler holds one of these
/// threads and never an I/O thread (which would stall every other connection that thread owns).
final class HandlerPool: Sendable {
    private let handler: @Sendable (HTTPRequest) -> HTTPResponse
    private let queue = Mutex(JobQueue())
    private let jobsAvailable = DispatchSemaphore(value: 0)
    private let threads = Mutex<[pthread_t]>([])
    private let deferred: DeferredConnections
    /// Nanoseconds a request may wait for a thread before it is refused with `overloaded`; 0 = no limit.
    private let queueWaitLimit: UInt64
    /// Now in nanoseconds, for the queue wait (`HTTPServerConfiguration.queueClock`).
    private let queueClock: @Sendable () -> UInt64
    private let overloaded: @Sendable () -> HTTPResponse
    let threadCount: Int

    init(
        threadCount: Int, queueWaitLimitMilliseconds: Int, queueClock: @escaping @Sendable () -> UInt64,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
        overloaded: @escaping @Sendable () -> HTTPResponse,
        deferred: DeferredConnections
    ) {
        self.handler = handler
        self.threadCount = threadCount
        self.queueWaitLimit = UInt64(queueWaitLimitMilliseconds) * 1_000_000
        self.queueClock = queueClock
        self.overloaded = overloaded
        self.deferred = deferred
    }

    /// Starts the threads; throws `start_failed` if the system refuses one (those already started are stopped).
    func start() throws(HTTPServerError) {
        for _ in 0..<threadCount {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let result = pthread_create(&thread, nil, heraldHTTPHandlerThreadMain, context)
            guard result == 0 else {
                Unmanaged<HandlerPool>.fromOpaque(context).release()
                shutdown()
                throw .startFailed("cannot start handler thread: \(String(cString: strerror(result)))")
            }
            threads.withLock { $0.append(thread) }
        }
    }

    /// Queues a request whose connection is suspended; false once the pool is shutting down.
    func submit(_ state: RequestState) -> Bool {
        if queueWaitLimit > 0 {
            state.queuedAt = queueClock()
        }
        let accepted = queue.withLock { queue in
            guard !queue.isClosed else { return false }
            queue.append(state)
            return true
        }
        if accepted {
            jobsAvailable.signal()
        }
        return accepted
    }

    /// Requests waiting for a handler thread.
    var queuedCount: Int { queue.withLock { $0.count } }

    /// Refuses new work, lets the threads finish everything already queued, and joins them.
    func shutdown() {
        queue.withLock { $0.isClosed = true }
        let running = threads.withLock { threads in
            defer { threads.removeAll() }
            return threads
        }
        for _ in running {
            jobsAvailable.signal()
        }
        for thread in running {
            pthread_join(thread, nil)
        }
    }

    /// A handler thread's life: take a job, run the handler, hand the answer back, until closed and empty.
    func runThread() {
        while true {
            jobsAvailable.wait()
            let next: RequestState?? = queue.withLock { queue in
                if let state = queue.popFirst() {
                    return .some(state)
                }
                return queue.isClosed ? .none : .some(nil)
            }
            guard let job = next else {
                return
            }
            guard let state = job else {
                continue
            }
            run(state)
        }
    }

    private func run(_ state: RequestState) {
        guard let request = state.pendingRequest, let connection = state.connection else {
            return
        }
        state.pendingRequest = nil
        if queueWaitLimit > 0, queueClock() - state.queuedAt > queueWaitLimit {
            // Refusing costs next to nothing, so a backlog past the limit drains at once.
            state.response = overloaded()
            MHD_resume_connection(connection)
            return
        }
        let response = handler(request)
        if let pending = response.deferred {
            // The connection stays suspended and this thread goes back to the queue: a waiting request
            // costs no handler thread.
            deferred.hold(pending, state: state, connection: connection)
            return
        }
        state.response = response
        MHD_resume_connection(connection)
    }
}

/// A growable ring buffer of requests waiting for a handler thread.
private struct JobQueue: ~Copyable {
    private var slots: [RequestState?] = Array(repeating: nil, count: 64)
    private var head = 0
    private(set) var count = 0
    var isClosed = false

    mutating func append(_ state: RequestState) {
        if count == slots.count {
            var grown: [RequestState?] = Array(repeating: nil, count: slots.count * 2)
            for index in 0..<count {
                grown[index] = slots[(head + index) % slots.count]
            }
            slots = grown
            head = 0
        }
        slots[(head + count) % slots.count] = state
        count += 1
    }

    mutating func popFirst() -> RequestState? {
        guard count > 0 else {
            return nil
        }
        let state = slots[head]
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
        return state
    }
}
