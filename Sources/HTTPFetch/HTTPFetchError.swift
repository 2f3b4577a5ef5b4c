import HeraldCore

/// Why a fetch got no usable response. `code` is stable; `message` never contains secrets: no request
/// headers, body or URL are quoted, only the kind of failure (and libcurl's generic text for it).
public typealias HTTPFetchError = CodedError<HTTPFetchErrorCode>

/// The stable codes of `HTTPFetchError`.
public enum HTTPFetchErrorCode: String, FailureCode {
    /// The URL does not parse, or has no host.
    case invalidURL = "invalid_url"
    /// The URL, or a redirect, is not `https://`.
    case schemeNotAllowed = "scheme_not_allowed"
    /// Every address the host resolved to is one the address policy refuses (loopback, private, metadata...).
    case addressRefused = "address_refused"
    /// The host name did not resolve.
    case dnsFailed = "dns_failed"
    /// No TCP connection could be made.
    case connectFailed = "connect_failed"
    /// The TLS handshake failed, or the peer's certificate is not trusted or not for this host.
    case tlsFailed = "tls_failed"
    /// No complete response within the request's timeout (or no connection within its connect timeout).
    case timeout
    /// The response body is over `maxResponseBytes` (policy `.fail`), or its headers over 64 KiB.
    case tooLarge = "too_large"
    /// More redirects than the request allows.
    case tooManyRedirects = "too_many_redirects"
    /// Any other transfer failure (the connection broke, the peer spoke broken HTTP).
    case network
    /// The request itself is unusable (a header with a line break, a negative limit): nothing was sent.
    case invalidRequest = "invalid_request"
    /// The fetcher was stopped before the response arrived.
    case stopped
}

extension HTTPFetchError {
    static let stoppedError = HTTPFetchError(.stopped, "the fetcher was stopped")
}
