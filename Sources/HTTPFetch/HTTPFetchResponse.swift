/// A response as received: the final one when redirects were followed.
public struct HTTPFetchResponse: Sendable {
    public var status: Int
    /// In arrival order, names lowercase.
    public var headers: [HTTPFetchHeader]
    public var body: [UInt8]
    /// The body was longer than the request's `maxResponseBytes` and cut there (`OversizePolicy.truncate`).
    public var truncated: Bool

    public init(status: Int, headers: [HTTPFetchHeader] = [], body: [UInt8] = [], truncated: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.truncated = truncated
    }

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
