/// One request in flight on a client connection: what is left of its body to send and the response so far.
final class ClientStream {
    let request: PendingRequest
    /// Bytes of the request body already handed to nghttp2.
    var bodyOffset = 0
    /// The HEADERS frame left: the server may have seen the request.
    var headersSent = false
    var status: Int?
    var headers: [HTTP2Header] = []
    var body: [UInt8] = []

    init(request: PendingRequest) {
        self.request = request
    }
}
