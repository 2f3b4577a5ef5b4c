import CMicroHTTPD
import Synchronization

/// What the C callbacks need, reached through the daemon's closure pointer (`Unmanaged.passUnretained`; the
/// `HTTPServer` owns it and stops the daemon before letting it go).
final class ServerContext: Sendable {
    /// How much of an oversized chunked body is read and dropped (so the client can read the answer) before the
    /// connection is simply closed.
    static let discardLimit = 1 << 20

    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let tooLarge: @Sendable () -> HTTPResponse
    let maxBodyBytes: Int
    /// The dedicated handler threads, or nil when handlers run inline on libmicrohttpd's threads.
    let pool: HandlerPool?
    /// Requests whose headers arrived and whose completion has not been reported yet.
    let openRequests = Atomic<Int>(0)
    /// Set by `stop()`: answers then carry `Connection: close` so keep-alive clients go away.
    let isDraining = Atomic<Bool>(false)
    /// An empty 500 built once and shared (libmicrohttpd responses are reference counted and thread-safe).
    nonisolated(unsafe) let internalErrorResponse: OpaquePointer?

    init(
        maxBodyBytes: Int,
        handlerThreads: Int?,
        tooLarge: @escaping @Sendable () -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) {
        self.handler = handler
        self.tooLarge = tooLarge
        self.maxBodyBytes = maxBodyBytes
        self.pool = handlerThreads.map { HandlerPool(threadCount: $0, handler: handler) }
        self.internalErrorResponse = MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    }

    deinit {
        if let internalErrorResponse {
            MHD_destroy_response(internalErrorResponse)
        }
    }
}
