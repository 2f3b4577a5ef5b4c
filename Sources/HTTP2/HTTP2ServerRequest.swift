/// A complete request as the server received it.
public struct HTTP2ServerRequest: Sendable {
    public var method: String
    public var path: String
    public var authority: String?
    public var scheme: String
    /// Regular headers in arrival order, names lowercase; pseudo-headers are in the fields above.
    public var headers: [HTTP2Header]
    public var body: [UInt8]
    /// Unique per server (across its loops) for the connection the request came on.
    public var connectionID: UInt64
    public var streamID: Int32

    public init(
        method: String, path: String, authority: String? = nil, scheme: String = "https",
        headers: [HTTP2Header] = [], body: [UInt8] = [], connectionID: UInt64 = 0, streamID: Int32 = 1
    ) {
        self.method = method
        self.path = path
        self.authority = authority
        self.scheme = scheme
        self.headers = headers
        self.body = body
        self.connectionID = connectionID
        self.streamID = streamID
    }

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
