import HTTP2

/// What `FCMClient` and `FCMAccessTokenProvider` need from an HTTP/2 connection pool.
/// `HTTP2Client` is the real one; tests may pass scripted ones through
/// `FCMClient.init(configuration:clock:transportFactory:)`.
public protocol FCMTransport: AnyObject, Sendable {
    /// Sends one request; `completion` runs once, possibly on the transport's own thread.
    func send(_ request: HTTP2Request, completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void)
    /// Opens the connections now instead of at the first send.
    func connect()
    /// Closes everything; later sends fail with `HTTP2Error.Code.shutdown`.
    func shutdown()
}

extension HTTP2Client: FCMTransport {}
