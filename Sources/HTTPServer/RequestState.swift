import CMicroHTTPD

/// What one request accumulates between libmicrohttpd's calls: kept in `*con_cls` (retained once) and released
/// by the request-completed callback.
///
/// `@unchecked Sendable` because it crosses threads in one strict hand-off: the connection's I/O thread fills it
/// and suspends the connection before queueing it for a handler thread; that thread sets `response` and resumes
/// the connection, and only then (through libmicrohttpd's lock) does the I/O thread look at it again. Two threads
/// never touch it at the same time.
final class RequestState: @unchecked Sendable {
    /// The body so far; capacity reserved from Content-Length when there is one.
    var body: [UInt8]
    /// The largest body this request may have (the server's, or its larger limit for this request).
    let bodyLimit: Int
    /// Set once a chunked body outgrew the limit: what follows is counted and dropped.
    var isTooLarge = false
    /// Bytes dropped since the body outgrew the limit (or since the request was refused).
    var discardedBytes = 0
    /// Set when the request is refused whatever it says (its connection is over its address's limit): the body
    /// is dropped as it comes and the refusal is the answer once it is complete.
    var refusal: HTTPRejection?
    /// Handler threads only: the request waiting for a handler, its connection (suspended meanwhile), and the
    /// handler's answer, queued by the I/O thread once the connection is resumed.
    var pendingRequest: HTTPRequest?
    var connection: OpaquePointer?
    var response: HTTPResponse?
    /// Handler threads only: when the request was queued (`DispatchTime` nanoseconds), for the queue wait limit.
    var queuedAt: UInt64 = 0

    init(reservingCapacity capacity: Int, bodyLimit: Int) {
        self.bodyLimit = bodyLimit
        body = []
        if capacity > 0 {
            body.reserveCapacity(capacity)
        }
    }

    /// Hands the body over without copying it.
    func takeBody() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &body)
        return taken
    }
}
