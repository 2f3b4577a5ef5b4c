/// One outbound HTTPS request. The defaults suit a small GET: 10 s in all, 5 s to connect, at most 1 MiB of
/// response body (more is an error), no redirects followed.
public struct HTTPFetchRequest: Sendable {
    public enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
    }

    /// What a response body longer than `maxResponseBytes` means.
    public enum OversizePolicy: Sendable, Equatable {
        /// The fetch fails with `too_large` (an icon over its cap is refused).
        case fail
        /// The first `maxResponseBytes` are kept, the rest is not read (the connection's stream is dropped) and
        /// the response says `truncated` (a webhook's answer is read up to a few KiB and ignored).
        case truncate
    }

    public var method: Method
    /// An absolute `https://` URL; any other scheme is refused before anything is sent.
    public var url: String
    /// Sent as given. Never logged nor quoted in errors (they may carry signatures or tokens).
    public var headers: [HTTPFetchHeader]
    /// The POST body (a GET has none).
    public var body: [UInt8]
    /// The whole exchange, redirects included.
    public var timeout: Duration
    /// Each connection's TCP and TLS set-up.
    public var connectTimeout: Duration
    public var maxResponseBytes: Int
    public var oversize: OversizePolicy
    /// How many redirects to follow (each hop is checked like the first URL: https only, address policy);
    /// 0 returns a 3xx as the response.
    public var followRedirects: Int

    public init(
        method: Method = .get, url: String, headers: [HTTPFetchHeader] = [], body: [UInt8] = [],
        timeout: Duration = .seconds(10), connectTimeout: Duration = .seconds(5),
        maxResponseBytes: Int = 1 << 20, oversize: OversizePolicy = .fail, followRedirects: Int = 0
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
        self.maxResponseBytes = maxResponseBytes
        self.oversize = oversize
        self.followRedirects = followRedirects
    }
}
