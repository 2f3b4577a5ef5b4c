import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What the C callbacks need, reached through the daemon's closure pointer (`Unmanaged.passUnretained`; the
/// `HTTPServer` owns it and stops the daemon before letting it go).
final class ServerContext: Sendable {
    /// How much of an oversized chunked body is read and dropped (so the client can read the answer) before the
    /// connection is simply closed.
    static let discardLimit = 1 << 20

    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let rejection: @Sendable (HTTPRejection) -> HTTPResponse
    let maxBodyBytes: Int
    let maxTargetBytes: Int
    let maxHeaderBytes: Int
    /// Nanoseconds a request may take to arrive whole; 0 = no deadline.
    let requestReadTimeout: Int64
    /// The dedicated handler threads, or nil when handlers run inline on libmicrohttpd's threads.
    let pool: HandlerPool?
    /// Requests whose headers arrived and whose completion has not been reported yet.
    let openRequests = Atomic<Int>(0)
    /// Set by `stop()`: answers then carry `Connection: close` so keep-alive clients go away.
    let isDraining = Atomic<Bool>(false)
    /// Open connections (for the read deadline).
    let connections = Mutex<[ObjectIdentifier: ConnectionRecord]>([:])
    /// Cleared by `stop()` under the `connections` lock: after that the sweeper touches no socket.
    let isSweeping = Atomic<Bool>(true)
    /// Suspended connections waiting for a deferred answer; closed by `stop()`.
    let deferred: DeferredConnections
    /// An empty 500 built once and shared (libmicrohttpd responses are reference counted and thread-safe).
    nonisolated(unsafe) let internalErrorResponse: OpaquePointer?

    init(
        configuration: HTTPServerConfiguration,
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.handler = handler
        self.rejection = rejection
        self.maxBodyBytes = configuration.maxBodyBytes
        self.maxTargetBytes = configuration.maxTargetBytes
        self.maxHeaderBytes = configuration.maxHeaderBytes
        self.requestReadTimeout = Int64(configuration.requestReadTimeoutSeconds) * 1_000_000_000
        let deferred = DeferredConnections()
        self.deferred = deferred
        let handlerThreads = configuration.dispatch == .inline ? nil : configuration.threadCount
        self.pool = handlerThreads.map { HandlerPool(threadCount: $0, handler: handler, deferred: deferred) }
        self.internalErrorResponse = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    }

    deinit {
        if let internalErrorResponse {
            MHD_destroy_response(internalErrorResponse)
        }
    }

    /// Cuts (shuts the socket down, so libmicrohttpd closes it) every connection whose current request has
    /// taken longer than the read deadline to arrive. Runs on the sweeper thread.
    func cutLateConnections() {
        guard requestReadTimeout > 0 else {
            return
        }
        let now = monotonicNanoseconds()
        connections.withLock { connections in
            guard isSweeping.load(ordering: .relaxed) else {
                return
            }
            for record in connections.values {
                let since = record.readingSince.load(ordering: .relaxed)
                if since >= 0, now - since > requestReadTimeout, !record.isCut.load(ordering: .relaxed) {
                    record.isCut.store(true, ordering: .relaxed)
                    // Under the registry lock: the close notification removes the record (taking this lock)
                    // before libmicrohttpd closes the descriptor, so it cannot be another socket by now.
                    shutdown(record.fd, Int32(SHUT_RDWR))
                }
            }
        }
    }
}

/// One open connection, stored as libmicrohttpd's socket context (retained once; released when it closes).
final class ConnectionRecord: Sendable {
    let fd: Int32
    /// When the current request started to arrive (monotonic ns), or -1 while a handler has it.
    let readingSince = Atomic<Int64>(0)
    let isCut = Atomic<Bool>(false)
    /// Length of the request target as the URI-log callback saw it (a C string, so ending at a raw NUL);
    /// compared with its length on the request line. Only the connection's I/O thread touches it.
    let targetLength = Atomic<Int>(-1)
    unowned let context: ServerContext

    init(fd: Int32, context: ServerContext) {
        self.fd = fd
        self.context = context
        readingSince.store(monotonicNanoseconds(), ordering: .relaxed)
    }
}

/// Connections suspended for a deferred answer. Once closed (the server is stopping) nothing is resumed
/// any more except by `closeAll` itself: libmicrohttpd must not see a resume after it stopped.
final class DeferredConnections: Sendable {
    private struct Registry: ~Copyable {
        var waiting: [ObjectIdentifier: DeferredHandOff] = [:]
        /// Inline mode: answers an I/O thread is waiting for.
        var inline: [ObjectIdentifier: DeferredResponse] = [:]
        var isClosed = false
    }

    private let registry = Mutex(Registry())

    /// Keeps the (already suspended) connection suspended until `pending` is completed.
    func hold(_ pending: DeferredResponse, state: RequestState, connection: OpaquePointer) {
        let handOff = DeferredHandOff(state: state, connection: connection)
        let key = ObjectIdentifier(state)
        let registered = registry.withLock { registry in
            guard !registry.isClosed else {
                handOff.resume(with: HTTPResponse(status: 503))
                return false
            }
            registry.waiting[key] = handOff
            return true
        }
        guard registered else {
            return
        }
        pending.whenComplete { [self] response in
            registry.withLock { registry in
                guard let handOff = registry.waiting.removeValue(forKey: key) else {
                    return // answered by closeAll already
                }
                handOff.resume(with: response)
            }
        }
    }

    /// Inline mode: an answer an I/O thread waits for, completed by `closeAll` if still open then.
    func track(_ pending: DeferredResponse) {
        let closed = registry.withLock { registry in
            if !registry.isClosed {
                registry.inline[ObjectIdentifier(pending)] = pending
            }
            return registry.isClosed
        }
        if closed {
            pending.complete(HTTPResponse(status: 503))
        }
    }

    func untrack(_ pending: DeferredResponse) {
        registry.withLock { _ = $0.inline.removeValue(forKey: ObjectIdentifier(pending)) }
    }

    /// Answers every waiting connection with `response` and refuses later waits (stop()).
    func closeAll(with response: HTTPResponse) {
        let inline = registry.withLock { registry in
            registry.isClosed = true
            for handOff in registry.waiting.values {
                handOff.resume(with: response)
            }
            registry.waiting.removeAll()
            defer { registry.inline.removeAll() }
            return Array(registry.inline.values)
        }
        for pending in inline {
            pending.complete(response)
        }
    }

    var count: Int {
        registry.withLock { $0.waiting.count }
    }
}

/// A suspended connection and its request's state, handed to whoever completes the deferred answer.
struct DeferredHandOff: @unchecked Sendable {
    let state: RequestState
    let connection: OpaquePointer

    /// Sets the answer and resumes; libmicrohttpd then calls the access handler, which queues it.
    func resume(with response: HTTPResponse) {
        state.response = response
        MHD_resume_connection(connection)
    }
}

func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
