import HeraldCore

/// How an `HTTP2Client` reaches one upstream (one scheme, host and port).
public struct HTTP2ClientConfiguration: Sendable {
    /// `https://host[:port]` (TLS, ALPN h2) or `http://host[:port]` (cleartext h2c, prior knowledge).
    public var url: String
    /// An extra trusted CA certificate (PEM), in addition to the system's (the simulator's certificate).
    public var caFile: String?
    /// Long-lived connections kept to the upstream; streams are spread over them.
    public var connectionCount: Int
    /// Our own cap on concurrent streams per connection; the peer's SETTINGS_MAX_CONCURRENT_STREAMS
    /// lowers it further.
    public var maxConcurrentStreams: Int
    /// Streams allowed on a new connection until a response on it proves the peer accepted our credentials: any
    /// final status except 401 and 403 (APNs with token auth allows one stream until then). nil: no such limit.
    public var streamsUntilAuthenticated: Int?
    public var connectTimeout: Duration
    /// Default per-request timeout (a request may override it).
    public var requestTimeout: Duration
    /// A PING is sent on a connection idle this long; a PING unanswered for as long closes it.
    public var pingInterval: Duration
    /// The wait after consecutive failed connection attempts (connect, TLS, no SETTINGS) before the next one, so a
    /// down or refusing upstream is not hammered. Requests sent while no connection may be attempted fail at once
    /// with the last attempt's error. A connection that becomes ready resets it.
    public var connectBackoff: ExponentialBackoff
    /// The response headers kept in `HTTP2Response.headers`, by lowercase name; nil keeps every one. A client
    /// that reads a few (APNs and FCM read `retry-after`) skips making two Strings for each other header of
    /// every answer (APNs sends `apns-id` and `apns-unique-id` on each). `:status` is always read.
    public var responseHeaders: [String]?

    /// 250 ms after the first failed connect, doubling up to 30 s.
    public static let defaultConnectBackoff = ExponentialBackoff(base: .milliseconds(250), maximum: .seconds(30))

    public init(
        url: String, caFile: String? = nil, connectionCount: Int = 2, maxConcurrentStreams: Int = 1000,
        streamsUntilAuthenticated: Int? = nil, connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(60),
        connectBackoff: ExponentialBackoff = HTTP2ClientConfiguration.defaultConnectBackoff,
        responseHeaders: [String]? = nil
    ) {
        self.url = url
        self.caFile = caFile
        self.connectionCount = connectionCount
        self.maxConcurrentStreams = maxConcurrentStreams
        self.streamsUntilAuthenticated = streamsUntilAuthenticated
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.pingInterval = pingInterval
        self.connectBackoff = connectBackoff
        self.responseHeaders = responseHeaders
    }
}
