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

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
