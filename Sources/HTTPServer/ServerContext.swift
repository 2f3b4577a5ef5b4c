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
    let largerBodyLimit: (@Sendable (RequestHead) -> Int?)?
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
        self.largerBodyLimit = configuration.largerBodyLimit
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
