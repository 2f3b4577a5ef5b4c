/// The answer to one request. `Content-Length` and `Date` are added by the server.
public struct HTTPResponse: Sendable {
    /// The status code, 100...999; anything else is answered with an empty 500.
    public var status: Int
    /// Headers in the order they are sent. A `Content-Length` given here is ignored (the server computes it);
    /// a name or value the server refuses (a line break, say) turns the whole answer into an empty 500.
    public var headers: [(name: String, value: String)]
    /// The body, sent as is.
    public var body: [UInt8]
    /// Set by `deferred(_:)`: the answer comes later, through `DeferredResponse.complete`; the other fields
    /// are then ignored.
    public private(set) var deferred: DeferredResponse?

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.deferred = nil
    }

    /// An answer given later. With handler threads the connection stays suspended and the handler thread is
    /// free at once: a waiting request costs no thread. (Inline handlers wait for it on the I/O thread.)
    public static func deferred(_ pending: DeferredResponse) -> HTTPResponse {
        var response = HTTPResponse(status: 500)
        response.deferred = pending
        return response
    }
}
