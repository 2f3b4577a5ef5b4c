/// One header field of a request or a response. Response names are lowercase (as HTTP/2 sends them; HTTP/1.1
/// names are lowercased on receipt), so look them up in lowercase.
public struct HTTPFetchHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
