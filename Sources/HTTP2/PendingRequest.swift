/// A request submitted to the client, from `send` until its completion ran (exactly once), and while it is in
/// flight also its stream's state: one object per request (a separate stream object per attempt was one more
/// allocation and release per delivery).
///
/// Loop-thread only after submission. It may wait in the queue, be in flight on a stream, and go back to the
/// queue when the server refused the stream (GOAWAY, REFUSED_STREAM) or the connection died before the request
/// left; `attempts` bounds that. Each time it is put on a stream `startStream` clears what the last one received.
final class PendingRequest {
    let request: HTTP2Request
    /// Monotonic nanoseconds: submission time plus the request's timeout.
    let deadline: UInt64
    private let completion: @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    private(set) var isDone = false
    /// Times it was put on a stream.
    var attempts = 0
    /// The stream it is in flight on, if any.
    var connection: ClientConnection?
    var streamID: Int32 = 0

    // The current stream (see `startStream`).
    /// Bytes of the request body already handed to nghttp2.
    var bodyOffset = 0
    /// The HEADERS frame left: the server may have seen the request.
    var headersSent = false
    var status: Int?
    var headers: [HTTP2Header] = []
    var body: [UInt8] = []

    init(
        request: HTTP2Request, deadline: UInt64,
        completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    ) {
        self.request = request
        self.deadline = deadline
        self.completion = completion
    }

    /// Forgets what an earlier stream of this request sent or received (a resend starts over).
    func startStream() {
        bodyOffset = 0
        headersSent = false
        status = nil
        if !headers.isEmpty { headers.removeAll() }
        if !body.isEmpty { body.removeAll() }
    }

    /// Runs the completion unless it already ran.
    func complete(_ result: Result<HTTP2Response, HTTP2Error>) {
        guard !isDone else {
            return
        }
        isDone = true
        connection = nil
        completion(result)
    }
}
