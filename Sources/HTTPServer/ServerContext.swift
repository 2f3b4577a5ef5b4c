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
    /// Nanoseconds a connection opened over its address's limit may stay silent before it is cut (at most the
    /// read deadline): it holds one of the server's connection slots until its refusal is sent.
    static let overLimitReadTimeout: Int64 = 1_000_000_000

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
    /// Requests run on their I/O thread even with handler threads (`HTTPServerConfiguration.answeredAtOnce`).
    let answeredAtOnce: (@Sendable (HTTPRequest) -> Bool)?
    /// Requests whose headers arrived and whose completion has not been reported yet.
    let openRequests = Atomic<Int>(0)
    /// Set by `stop()`: answers then carry `Connection: close` so keep-alive clients go away.
    let isDraining = Atomic<Bool>(false)
    /// Which new connections are served and which only refused (the server's and the per-address limits).
    let admission: ConnectionAdmission
    /// The `Keep-Alive` header's value on answers that leave the connection open (`timeout=` a second under the
    /// idle timeout, so clients retire an idle connection before the server closes it); nil when there is no
    /// idle timeout or it is under 2 s.
    let keepAliveValue: String?
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
        self.admission = ConnectionAdmission(
            serverLimit: configuration.connectionLimit,
            addressLimit: configuration.perAddressConnectionLimit)
        let idle = configuration.connectionTimeoutSeconds
        self.keepAliveValue = idle >= 2 ? "timeout=\(idle - 1)" : nil
        let deferred = DeferredConnections()
        self.deferred = deferred
        let handlerThreads = configuration.dispatch == .inline ? nil : configuration.threadCount
        self.answeredAtOnce = configuration.answeredAtOnce
        self.pool = handlerThreads.map {
            HandlerPool(
                threadCount: $0, queueWaitLimitMilliseconds: configuration.queueWaitLimitMilliseconds,
                queueClock: configuration.queueClock, handler: handler,
                overloaded: { Self.render(.overloaded, with: rejection) },
                deferred: deferred)
        }
        self.internalErrorResponse = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    }

    deinit {
        if let internalErrorResponse {
            MHD_destroy_response(internalErrorResponse)
        }
    }

    /// Cuts (shuts the socket down, so libmicrohttpd closes it) every connection whose current request has
    /// taken longer than the read deadline to arrive (a connection over a limit, longer than
    /// `overLimitReadTimeout`). Runs on the sweeper thread.
    func cutLateConnections() {
        guard requestReadTimeout > 0 else {
            return
        }
        let now = monotonicNanoseconds()
        let overLimitTimeout = min(requestReadTimeout, Self.overLimitReadTimeout)
        connections.withLock { connections in
            guard isSweeping.load(ordering: .relaxed) else {
                return
            }
            for record in connections.values {
                let since = record.readingSince.load(ordering: .relaxed)
                let timeout = record.refusal != nil ? overLimitTimeout : requestReadTimeout
                if since >= 0, now - since > timeout, !record.isCut.load(ordering: .relaxed) {
                    record.isCut.store(true, ordering: .relaxed)
                    // Under the registry lock: the close notification removes the record (taking this lock)
                    // before libmicrohttpd closes the descriptor, so it cannot be another socket by now.
                    shutdown(record.fd, Int32(SHUT_RDWR))
                }
            }
        }
    }
}
