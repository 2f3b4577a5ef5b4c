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
    /// Streams allowed on a new connection until one response with a 2xx status arrived on it
    /// (APNs with token auth allows one). nil: no such limit.
    public var streamsBeforeFirstSuccess: Int?
    public var connectTimeout: Duration
    /// Default per-request timeout (a request may override it).
    public var requestTimeout: Duration
    /// A PING is sent on a connection idle this long; a PING unanswered for as long closes it.
    public var pingInterval: Duration

    public init(url: String, caFile: String? = nil, connectionCount: Int = 2, maxConcurrentStreams: Int = 1000,
                streamsBeforeFirstSuccess: Int? = nil, connectTimeout: Duration = .seconds(5),
                requestTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(60)) {
        self.url = url
        self.caFile = caFile
        self.connectionCount = connectionCount
        self.maxConcurrentStreams = maxConcurrentStreams
        self.streamsBeforeFirstSuccess = streamsBeforeFirstSuccess
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.pingInterval = pingInterval
    }
}
