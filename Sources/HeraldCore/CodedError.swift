/// The stable codes of one kind of failure: a `String` enum whose raw values scripts, tests and
/// metrics labels rely on.
public protocol FailureCode: RawRepresentable, Hashable, Sendable where RawValue == String {}

/// A failure with a stable `code` and a `message` safe to log: the message never quotes secrets
/// (headers, bodies, key material). One shape for the HTTP/2 client and server, the fetcher, the
/// simulator and the icon renderer; each names its own code enum, e.g.
/// `typealias HTTP2Error = CodedError<HTTP2ErrorCode>`.
public struct CodedError<Kind: FailureCode>: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = Kind

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
