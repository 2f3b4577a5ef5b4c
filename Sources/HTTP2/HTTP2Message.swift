/// One header field. Names are lowercase (HTTP/2 requires it); pseudo-headers are not listed here.
public struct HTTP2Header: Sendable, Equatable {
    public var name: String
    public var value: String
    /// Sent as an HPACK literal that is never indexed. For values unique to one message (an id, a timestamp): indexed,
    /// each would take a slot in both sides' header tables and push out the fields that do repeat (the topic,
    /// the push type), which then go out in full again. The field is the same either way, so headers
    /// compare by name and value only. A received header says how the peer sent it.
    public var neverIndexed: Bool

    public init(_ name: String, _ value: String, neverIndexed: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndexed = neverIndexed
    }

    public static func == (lhs: HTTP2Header, rhs: HTTP2Header) -> Bool {
        lhs.name == rhs.name && lhs.value == rhs.value
    }
}

/// A request the client sends: `:method`, `:path`, headers, body. `:scheme` and `:authority`
/// come from the client's configured URL.
public struct HTTP2Request: Sendable {
    public var method: String
    public var path: String
    public var headers: [HTTP2Header]
    public var body: [UInt8]
    /// Overrides the client's default request timeout.
    public var timeout: Duration?

    public init(
        method: String = "POST", path: String, headers: [HTTP2Header] = [], body: [UInt8] = [],
        timeout: Duration? = nil
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// A complete response: status, headers and the whole body.
public struct HTTP2Response: Sendable {
    public var status: Int
    public var headers: [HTTP2Header]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
