/// A request the server refuses before any handler sees it: its framing, target or size, or something
/// libmicrohttpd itself refused. `code` is stable; `message` is for people and never repeats request data.
public struct HTTPRejection: Sendable, Equatable {
    public let status: Int
    public let code: String
    public let message: String
    /// Sent as `Retry-After` (seconds) with the answer, when set.
    public var retryAfterSeconds: Int?

    /// The target has a NUL (raw or `%00`), a control character, an escaped `/`, a bad percent escape or
    /// invalid UTF-8.
    public static let invalidTarget = HTTPRejection(
        status: 400, code: "invalid_path",
        message: "The request path must be valid UTF-8 without control characters, NUL or an escaped slash.")
    /// Both Content-Length and Transfer-Encoding, several different Content-Lengths, or a transfer coding
    /// other than chunked (RFC 9112 6.3: the connection is closed after the answer).
    public static let ambiguousFraming = HTTPRejection(
        status: 400, code: "invalid_framing",
        message: "The request framing is ambiguous (Content-Length with Transfer-Encoding, or conflicting lengths).")
    /// An HTTP/1.1 request without exactly one Host header (RFC 9112 3.2).
    public static let missingHost = HTTPRejection(
        status: 400, code: "missing_host", message: "An HTTP/1.1 request needs exactly one Host header.")
    public static let malformed = HTTPRejection(
        status: 400, code: "malformed_request", message: "The request is not valid HTTP/1.1.")
    public static let bodyTooLarge = HTTPRejection(
        status: 413, code: "body_too_large", message: "The request body is larger than the limit.")
    public static let targetTooLong = HTTPRejection(
        status: 414, code: "uri_too_long", message: "The request target is longer than the limit.")
    public static let headersTooLarge = HTTPRejection(
        status: 431, code: "headers_too_large", message: "The request headers are larger than the limit.")
    /// A request on a connection opened while its client address already had
    /// `HTTPServerConfiguration.perAddressConnectionLimit` connections open (the connection is closed after it).
    public static let tooManyConnections = HTTPRejection(
        status: 503, code: "too_many_connections",
        message: "Too many connections from this address; send on a connection already open, or retry later.",
        retryAfterSeconds: 1)
    /// A request that waited longer than `HTTPServerConfiguration.queueWaitLimitMilliseconds` for a handler:
    /// nothing was done, so the client may send it again as it was.
    public static let overloaded = HTTPRejection(
        status: 503, code: "overloaded",
        message: "The server is busy and did not process the request; retry it after the Retry-After delay.",
        retryAfterSeconds: 1)
    public static let versionNotSupported = HTTPRejection(
        status: 505, code: "http_version_not_supported", message: "Only HTTP/1.0 and HTTP/1.1 are served.")

    /// What libmicrohttpd meant by a status it chose itself.
    static func fromLibrary(status: Int) -> HTTPRejection {
        switch status {
        case 400: .malformed
        case 413: .bodyTooLarge
        case 414: .targetTooLong
        case 431: .headersTooLarge
        case 505: .versionNotSupported
        default: HTTPRejection(status: status, code: "request_refused", message: "The request was refused.")
        }
    }

    /// `{"error":{"code","message","field":null}}`, the answer when the server's owner builds none.
    public var defaultResponse: HTTPResponse {
        let body = "{\"error\":{\"code\":\"\(code)\",\"message\":\"\(message)\",\"field\":null}}"
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
}
