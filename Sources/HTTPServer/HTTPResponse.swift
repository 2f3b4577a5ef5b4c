/// The answer to one request. `Content-Length` and `Date` are added by the server.
public struct HTTPResponse: Sendable {
    /// The status code, 100...999; anything else is answered with an empty 500.
    public var status: Int
    /// Headers in the order they are sent. A `Content-Length` given here is ignored (the server computes it);
    /// a name or value the server refuses (a line break, say) turns the whole answer into an empty 500.
    public var headers: [(name: String, value: String)]
    /// The body, sent as is.
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
