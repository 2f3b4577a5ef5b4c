/// One HTTP request, complete: the handler never sees a partial body.
public struct HTTPRequest: Sendable {
    /// The request method as sent: "GET", "POST", ...
    public let method: String
    /// The URL path without the query string, percent-decoded by the server (never holds a NUL, a control
    /// character or a `/` that was escaped: such requests are refused before any handler).
    public let path: String
    /// Query arguments, decoded. When a name repeats, the first value wins; `?flag` maps to "".
    public let query: [String: String]
    /// Request headers with lowercased names. Repeated headers are joined with ", ".
    public let headers: [String: String]
    /// The complete body (empty when there is none).
    public let body: [UInt8]
    /// The address of the connection's other end (an IPv4 peer of a dual-stack socket as IPv4); nil when the
    /// server does not know it. Behind a proxy this is the proxy.
    public let peer: IPAddress?

    /// The value of the header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        if let value = headers[name] {
            return value
        }
        return headers[name.lowercased()]
    }
}
