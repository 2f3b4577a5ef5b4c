/// Why the server could not start. `code` is stable; `message` is for people.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier: "bind_failed", "start_failed" or "invalid_configuration".
    public let code: String
    /// What went wrong, in words (never request data).
    public let message: String

    public var description: String { "HTTPServerError(\(code)): \(message)" }

    /// The address could not be bound (in use, not local, or a privileged port).
    static func bindFailed(_ message: String) -> HTTPServerError {
        HTTPServerError(code: "bind_failed", message: message)
    }

    /// libmicrohttpd refused to start for another reason (threads, epoll, memory).
    static func startFailed(_ message: String) -> HTTPServerError {
        HTTPServerError(code: "start_failed", message: message)
    }

    /// A configuration value is out of range; the message names it.
    static func invalidConfiguration(_ message: String) -> HTTPServerError {
        HTTPServerError(code: "invalid_configuration", message: message)
    }
}
