/// A request submitted to the client, from `send` until its completion ran (exactly once).
///
/// Loop-thread only after submission. It may wait in the queue, be in flight on a stream, and go back to the
/// queue when the server refused the stream (GOAWAY, REFUSED_STREAM) or the connection died before the request
/// left; `attempts` bounds that.
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

    init(request: HTTP2Request, deadline: UInt64,
         completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void) {
        self.request = request
        self.deadline = deadline
        self.completion = completion
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
