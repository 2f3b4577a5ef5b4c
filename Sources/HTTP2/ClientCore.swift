import CNghttp2

#if canImport(Glibc)
    import Glibc
#endif

/// The loop-thread side of an `HTTP2Client`: its connections, the queue, timeouts and retries.
///
/// Requests go to the ready connection with the most free streams; when none has room they wait in the queue
/// (their timeout already running). A request comes back to the front of the queue, instead of failing, whenever
/// the server provably did not process it: a GOAWAY whose last stream id is below it, RST_STREAM REFUSED_STREAM,
/// or a connection that died before its HEADERS left.
///
/// Consecutive failed connection attempts back off (`HTTP2ClientConfiguration.connectBackoff`): until the wait is
/// over, requests that no connection could carry fail at once with the last attempt's error.
final class ClientCore {
    /// Resends of one request before giving up (a server refusing everything must not loop us forever).
    static let maxAttempts = 5

    let configuration: HTTP2ClientConfiguration
    let upstream: UpstreamURL
    let loop: EventLoop
    let counters: ClientCounters
    /// `configuration.responseHeaders` as bytes, compared with each received name before any String is made.
    let keptResponseHeaders: [[UInt8]]?
    private let tls: TLSContext?
    private var connections: [ClientConnection] = []
    /// Name resolutions in progress (each becomes a connection).
    private var resolving = 0
    private var queue = RequestQueue()
    private var isShutdown = false
    private var sweepTimer: LoopTimer?
    /// Connection attempts that failed since a connection last became ready.
    private var failedAttempts = 0
    /// After failed attempts: no new attempt before this (monotonic nanoseconds), see `connectBackoff`.
    private var nextAttemptAt: UInt64 = 0
    /// The last failed attempt's error, given to requests sent while no attempt may be made.
    private var lastAttemptError: HTTP2Error?

    init(
        configuration: HTTP2ClientConfiguration, upstream: UpstreamURL, tls: TLSContext?, loop: EventLoop,
        counters: ClientCounters
    ) {
        self.configuration = configuration
        self.upstream = upstream
        self.tls = tls
        self.loop = loop
        self.counters = counters
        keptResponseHeaders = configuration.responseHeaders.map { $0.map { Array($0.lowercased().utf8) } }
    }

    // MARK: Requests

    func submit(_ request: PendingRequest) {
        guard !isShutdown else {
            request.complete(.failure(HTTP2Error(.shutdown, "the client is shut down")))
            return
        }
        // In connect backoff with nothing that could carry it: fail now instead of starting another attempt (or
        // queueing behind a wait that may outlast the request's timeout).
        if let error = lastAttemptError, !hasUsableConnection {
            let now = MonotonicClock.now()
            if now < nextAttemptAt {
                counters.requestsFailedInConnectBackoff.increment()
                let waitMs = (nextAttemptAt - now + 999_999) / 1_000_000
                request.complete(
                    .failure(
                        HTTP2Error(
                            error.code, error.message + " (connect backoff: next attempt in \(waitMs) ms)")))
                return
            }
        }
        queue.append(request)
        scheduleSweep(at: request.deadline)
        ensureConnections(afterFailure: true)
        dispatch()
    }

    /// `HTTP2Client.connect()`: opens the connections a request would (none while a failed attempt's backoff runs).
    func connect() {
        ensureConnections(afterFailure: true)
        updateGauges()
    }

    /// Moves queued requests onto connections with free streams.
    private func dispatch() {
        guard !isShutdown else {
            return
        }
        while let first = queue.first {
            if first.isDone {
                _ = queue.removeFirst()
                continue
            }
            guard let connection = connectionWithRoom() else {
                break
            }
            _ = queue.removeFirst()
            connection.submit(first)
        }
        if !queue.isEmpty {
            ensureConnections()
        }
        updateGauges()
    }

    private func connectionWithRoom() -> ClientConnection? {
        var best: ClientConnection?
        var bestRoom = 0
        for connection in connections {
            let room = connection.availableStreams
            if room > bestRoom {
                best = connection
                bestRoom = room
            }
        }
        return best
    }

    private func updateGauges() {
        var inFlight = 0
        var available = 0
        for connection in connections {
            inFlight += connection.streams.count
            available += max(0, connection.availableStreams)
        }
        counters.streamsInFlight.store(inFlight, ordering: .relaxed)
        counters.streamsAvailable.store(available, ordering: .relaxed)
        counters.queued.store(queue.count, ordering: .relaxed)
    }

    /// Puts a request the server did not process back at the front of the queue, unless it was resent enough.
    private func resend(_ request: PendingRequest, afterGoAway: Bool) {
        request.connection = nil
        guard request.attempts < Self.maxAttempts else {
            request.complete(
                .failure(
                    afterGoAway
                        ? HTTP2Error(
                            .goAway, "the server sent GOAWAY before processing the request \(request.attempts) times")
                        : HTTP2Error(.streamReset, "the server refused the stream \(request.attempts) times")))
            return
        }
        if afterGoAway {
            counters.requestsRetriedAfterGoAway.increment()
        } else {
            counters.requestsRetriedAfterRefused.increment()
        }
        queue.prepend(request)
    }

    // MARK: Stream events (from nghttp2 callbacks: mark and complete, never close)

    func responseCompleted(on connection: ClientConnection, streamID: Int32) {
        guard let stream = connection.stream(streamID), !stream.isDone else {
            return
        }
        let status = stream.status ?? 0
        // Any answer but 401/403 means the credentials passed (APNs: a BadDeviceToken or 410 proves the JWT was
        // accepted as well as a 200 does), so the connection may use every stream the peer allows.
        if status >= 200, status != 401, status != 403 {
            connection.isAuthenticated = true
        }
        stream.complete(.success(HTTP2Response(status: status, headers: stream.headers, body: stream.body)))
    }

    func streamClosed(on connection: ClientConnection, streamID: Int32, errorCode: UInt32) {
        guard let stream = connection.removeStream(streamID), !stream.isDone else {
            return
        }
        if errorCode == NGHTTP2_REFUSED_STREAM.rawValue, stream.status == nil {
            resend(stream, afterGoAway: connection.isUnprocessedByGoAway(streamID))
            return
        }
        stream.complete(.failure(HTTP2Error(.streamReset, "the server reset the stream (HTTP/2 error \(errorCode))")))
    }

    func streamNotSent(on connection: ClientConnection, streamID: Int32) {
        guard let stream = connection.removeStream(streamID), !stream.isDone else {
            return
        }
        resend(stream, afterGoAway: connection.goAwayLastStreamID != nil)
    }

    /// After a connection handled input (outside nghttp2's callbacks): close what is finished, fill free streams.
    func connectionDidProcessInput(_ connection: ClientConnection) {
        connection.finishIfIdle()
        dispatch()
    }

    // MARK: Connections

    /// Opens connections until `connectionCount` are usable or on their way (retiring ones do not count).
    ///
    /// After failed attempts only a new request may try again (`afterFailure`), and only once the connect backoff
    /// has passed: reconnecting on our own, or for every request, would hammer a peer that is down or refusing.
    private func ensureConnections(afterFailure: Bool = false) {
        guard !isShutdown, afterFailure || failedAttempts == 0 else {
            return
        }
        guard failedAttempts == 0 || MonotonicClock.now() >= nextAttemptAt else {
            return
        }
        var active = resolving
        for connection in connections where !connection.isRetiring && connection.goAwayLastStreamID == nil {
            active += 1
        }
        while active < configuration.connectionCount {
            openConnection()
            active += 1
        }
    }

    private func openConnection() {
        counters.connectionsOpened.increment()
        if let address = SocketAddress(numericHost: upstream.host, port: upstream.port) {
            connect(to: address)
            return
        }
        // getaddrinfo blocks: resolve on a thread of its own and continue on the loop.
        resolving += 1
        let host = upstream.host, port = upstream.port
        let core = LoopBound(self, loop: loop)
        let loop = self.loop
        let started = DetachedThread.run {
            let result = Result { () throws(HTTP2Error) in try SocketAddress.resolve(host: host, port: port) }
            loop.execute { core.value.resolved(result) }
        }
        if !started {
            resolving -= 1
            attemptFailed(HTTP2Error(.connectFailed, "cannot start a resolver thread"))
        }
    }

    private func resolved(_ result: Result<[SocketAddress], HTTP2Error>) {
        resolving -= 1
        guard !isShutdown else {
            return
        }
        switch result {
        case .success(let addresses):
            connect(to: addresses[0])
        case .failure(let error):
            attemptFailed(error)
        }
    }

    private func connect(to address: SocketAddress) {
        let fd: Int32
        let connected: Bool
        do {
            fd = try Socket.make(family: address.family)
        } catch {
            attemptFailed(HTTP2Error(.connectFailed, "cannot connect to \(address): \(error)"))
            return
        }
        do {
            connected = try Socket.connect(fd, to: address)
        } catch {
            close(fd)
            attemptFailed(HTTP2Error(.connectFailed, "cannot connect to \(address): \(error)"))
            return
        }
        Socket.setNoDelay(fd)
        do {
            let transport = try Transport(fd: fd, tls: tls, isServer: false, peerHost: upstream.host)
            let connection = ClientConnection(core: self, transport: transport, connected: connected)
            connections.append(connection)
            connection.startConnectTimer()
            try connection.start()
        } catch {
            close(fd)
            attemptFailed(error)
        }
    }

    /// A connection attempt failed before the connection was usable. With no other connection ready or on its way,
    /// nothing can serve the queue: fail it (the callers decide about retrying) rather than reconnect in a loop.
    private func attemptFailed(_ error: HTTP2Error) {
        counters.connectionsFailed.increment()
        failedAttempts += 1
        lastAttemptError = error
        let wait = configuration.connectBackoff.delay(afterFailures: failedAttempts, random: Double.random(in: 0..<1))
        nextAttemptAt = MonotonicClock.now() + wait.nanoseconds
        counters.consecutiveConnectFailures.store(failedAttempts, ordering: .relaxed)
        counters.connectBackoffMilliseconds.store(Int(wait.nanoseconds / 1_000_000), ordering: .relaxed)
        guard !hasUsableConnection else {
            return
        }
        for request in queue.removeAll() {
            request.complete(.failure(error))
        }
        updateGauges()
    }

    /// A connection completed its handshake and the peer's SETTINGS arrived: the upstream is reachable again.
    func connectionReady(_ connection: ClientConnection) {
        failedAttempts = 0
        nextAttemptAt = 0
        lastAttemptError = nil
        counters.consecutiveConnectFailures.store(0, ordering: .relaxed)
        counters.connectBackoffMilliseconds.store(0, ordering: .relaxed)
    }

    /// A connection that is usable or on its way (resolving, connecting, handshaking, open and not retiring).
    private var hasUsableConnection: Bool {
        resolving > 0 || connections.contains { !$0.isRetiring && $0.goAwayLastStreamID == nil }
    }

    func connectionClosed(_ connection: ClientConnection, error: HTTP2Error?, orphans: [PendingRequest]) {
        connections.removeAll { $0 === connection }
        // Resend in stream order: prepend the latest first.
        for request in orphans.sorted(by: { $0.streamID > $1.streamID }) {
            guard !request.isDone else {
                continue
            }
            if isShutdown {
                request.complete(.failure(HTTP2Error(.shutdown, "the client is shut down")))
            } else if !request.headersSent {
                resend(request, afterGoAway: false)
            } else {
                request.connection = nil
                let reason = error?.message ?? "the connection closed"
                request.complete(.failure(HTTP2Error(.connectionLost, reason)))
            }
        }
        if let error, !connection.receivedSettings {
            attemptFailed(error)
        } else if error != nil {
            counters.connectionsFailed.increment()
        }
        if !isShutdown, !queue.isEmpty {
            ensureConnections()
            dispatch()
        } else {
            updateGauges()
        }
    }

    func recycleConnections() {
        for connection in connections {
            connection.retire()
        }
        if !queue.isEmpty {
            ensureConnections()
        }
    }

    func shutdown() {
        guard !isShutdown else {
            return
        }
        isShutdown = true
        sweepTimer?.cancel()
        for request in queue.removeAll() {
            request.complete(.failure(HTTP2Error(.shutdown, "the client is shut down")))
        }
        for connection in connections {
            connection.close(nil)
        }
        connections.removeAll()
        updateGauges()
    }

    // MARK: Timeouts

    /// Timeouts are checked by a sweep scheduled for the earliest deadline, not by a timer per request: at high
    /// rates a timer per request would keep every request alive for its whole timeout.
    private func scheduleSweep(at deadline: UInt64) {
        if let timer = sweepTimer, !timer.isCancelled, timer.deadline <= deadline {
            return
        }
        sweepTimer?.cancel()
        sweepTimer = loop.schedule(at: deadline) { [unowned self] in
            self.sweepTimeouts()
        }
    }

    private func sweepTimeouts() {
        sweepTimer = nil
        let now = MonotonicClock.now()
        var earliest = UInt64.max
        queue.forEach { request in
            guard !request.isDone else {
                return
            }
            if request.deadline <= now {
                counters.requestsTimedOut.increment()
                request.complete(.failure(HTTP2Error(.timeout, "no stream became free within the request timeout")))
            } else {
                earliest = min(earliest, request.deadline)
            }
        }
        for connection in connections {
            for (streamID, stream) in connection.streams where !stream.isDone {
                if stream.deadline <= now {
                    counters.requestsTimedOut.increment()
                    stream.complete(.failure(HTTP2Error(.timeout, "no response within the request timeout")))
                    connection.cancel(streamID: streamID)
                } else {
                    earliest = min(earliest, stream.deadline)
                }
            }
        }
        if earliest != .max {
            // At least a millisecond apart, so a burst of near-equal deadlines is handled in one sweep.
            scheduleSweep(at: max(earliest, now + 1_000_000))
        }
        dispatch()
    }
}
