import CMicroHTTPD

/// A request's line and headers before its body is read: what `HTTPServerConfiguration.largerBodyLimit`
/// decides on. Valid only during that call (it reads the connection's headers in place).
public struct RequestHead {
    public let method: String
    /// The path, without the query.
    public let path: String
    let connection: OpaquePointer

    /// A header's value (names are case-insensitive); nil when absent.
    public func header(_ name: String) -> String? {
        MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
    }
}
