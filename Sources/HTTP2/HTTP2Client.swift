import Synchronization

/// An HTTP/2 client for one upstream (APNs, FCM, the simulator): a few long-lived connections, many streams each.
///
/// One event-loop thread owns the connections. Requests are spread over `connectionCount` connections (opened by
/// `connect()` or at the first request, reopened when lost), within min(our `maxConcurrentStreams`, the peer's
/// SETTINGS_MAX_CONCURRENT_STREAMS) streams each, and queue when every connection is full. Requests the server
/// provably did not process (GOAWAY, REFUSED_STREAM) are resent transparently; a connection lost with a request
/// in flight fails it with `.connectionLost` (the server may have processed it: the caller decides). Failed
/// connection attempts back off exponentially (`connectBackoff`); meanwhile requests no connection can carry fail at
/// once with the last attempt's error instead of each starting a new attempt.
public final class HTTP2Client: Sendable {
    public let configuration: HTTP2ClientConfiguration
    private let loop: EventLoop
    nonisolated(unsafe) private let core: ClientCore
    private let counters = ClientCounters()
    private let isShutdown = Atomic<Bool>(false)

    /// Validates the URL and CA file and starts the event loop; connects at `connect()` or the first request.
    public init(configuration: HTTP2ClientConfiguration) throws(HTTP2Error) {
        let upstream = try UpstreamURL(configuration.url)
        guard configuration.connectionCount >= 1 else {
            throw HTTP2Error(.invalidConfiguration, "connectionCount must be at least 1")
        }
        guard configuration.maxConcurrentStreams >= 1 else {
            throw HTTP2Error(.invalidConfiguration, "maxConcurrentStreams must be at least 1")
        }
        guard configuration.connectBackoff.base >= .zero,
            configuration.connectBackoff.maximum >= configuration.connectBackoff.base
        else {
            throw HTTP2Error(.invalidConfiguration, "connectBackoff needs 0 <= base <= maximum")
        }
        let tls = upstream.isTLS ? try TLSContext.client(caFile: configuration.caFile) : nil
        IgnoreSIGPIPE.once()
        self.configuration = configuration
        loop = try EventLoop(name: "http2-client")
        core = ClientCore(configuration: configuration, upstream: upstream, tls: tls, loop: loop, counters: counters)
    }

    deinit {
        shutdown()
    }

    /// Opens the connections now rather than at the first request, so that the first requests do not wait for the
    /// TCP and TLS handshakes and the peer's SETTINGS. Returns at once; a failed attempt backs off as a request's would.
    public func connect() {
        guard !isShutdown.load(ordering: .relaxed) else {
            return
        }
        loop.execute { [self] in
            core.connect()
        }
    }

    /// Sends a request. `completion` runs exactly once, on the client's event-loop thread: keep it short and never
    /// block in it (hand the result to your own thread or continuation).
    public func send(
        _ request: HTTP2Request,
        completion: @escaping @Sendable (Result<HTTP2Response, HTTP2Error>) -> Void
    ) {
        guard !isShutdown.load(ordering: .relaxed) else {
            completion(.failure(HTTP2Error(.shutdown, "the client is shut down")))
            return
        }
        let timeout = request.timeout ?? configuration.requestTimeout
        let pending = PendingRequest(
            request: request, deadline: MonotonicClock.now() + timeout.nanoseconds,
            completion: completion)
        let accepted = loop.execute(handingOver: pending) { [self] pending in
            core.submit(pending)
        }
        if !accepted {
            completion(.failure(HTTP2Error(.shutdown, "the client is shut down")))
        }
    }

    /// Sends a request and waits for its response.
    public func send(_ request: HTTP2Request) async throws(HTTP2Error) -> HTTP2Response {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<HTTP2Response, HTTP2Error>, Never>) in
            send(request) { result in
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// Gracefully retires every current connection: streams in flight finish on them, new requests go to fresh
    /// connections. (APNs: after ExpiredProviderToken.)
    public func recycleConnections() {
        loop.execute { [self] in
            core.recycleConnections()
        }
    }

    /// Fails queued and in-flight requests with `.shutdown`, closes the connections and joins the loop thread.
    /// Idempotent. From a completion handler (the loop thread) it returns without joining.
    public func shutdown() {
        guard !isShutdown.exchange(true, ordering: .relaxed) else {
            return
        }
        loop.execute(handingOver: core) { core in
            core.shutdown()
        }
        loop.stop()
    }

    /// Counters and gauges, for tests and metrics.
    public var statistics: HTTP2ClientStatistics {
        counters.snapshot
    }
}
