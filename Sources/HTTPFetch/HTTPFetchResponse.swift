/// A response as received: the final one when redirects were followed.
public struct HTTPFetchResponse: Sendable {
    public var status: Int
    /// In arrival order, names lowercase.
    public var headers: [HTTPFetchHeader]
    public var body: [UInt8]
    /// The body was longer than the request's `maxResponseBytes` and cut there (`OversizePolicy.truncate`).
    public var truncated: Bool

    /// The first value of a header, by lowercase name.
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }
}
