/// Where and how an `HTTP2Server` listens.
public struct HTTP2ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port; read it back from `HTTP2Server.port`.
    public var port: Int
    /// PEM certificate and key: TLS with ALPN h2. Both nil: cleartext h2c (prior knowledge).
    public var tlsCertificateFile: String?
    public var tlsKeyFile: String?
    /// SETTINGS_MAX_CONCURRENT_STREAMS announced to clients.
    public var maxConcurrentStreams: Int
    /// Largest request body accepted; a larger one is answered 413 without calling the handler.
    public var maxBodyBytes: Int
    /// Event-loop threads, each with its own listening socket (SO_REUSEPORT) and connections. One is plenty for
    /// tests; the simulator may use one per core.
    public var loopCount: Int = 1

    public init(
        host: String = "127.0.0.1", port: Int = 0, tlsCertificateFile: String? = nil,
        tlsKeyFile: String? = nil, maxConcurrentStreams: Int = 1000, maxBodyBytes: Int = 1 << 20
    ) {
        self.host = host
        self.port = port
        self.tlsCertificateFile = tlsCertificateFile
        self.tlsKeyFile = tlsKeyFile
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxBodyBytes = maxBodyBytes
    }
}
