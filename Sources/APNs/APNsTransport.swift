import HTTP2

/// What `APNsClient` needs from an HTTP/2 connection pool to one APNs host. `HTTP2Client` is the
/// real one; tests may pass a scripted one to `APNsClient.init(configuration:clock:transportFactory:)`.
public protocol APNsTransport: AnyObject, Sendable {
    /// Sends one request; `completion` runs once, possibly on the transport's own thread.
    func send(_ request: HTTP2Request, completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void)
    /// Opens the connections now instead of at the first send.
    func connect()
    /// Replaces the connections (in-flight streams finish on the old ones).
    func recycleConnections()
    /// Closes everything; later sends fail with `HTTP2Error.Code.shutdown`.
    func shutdown()
}

extension HTTP2Client: APNsTransport {}
