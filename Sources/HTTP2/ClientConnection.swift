import CNghttp2

/// One HTTP/2 connection of an `HTTP2Client`: its streams, the peer's limits, GOAWAY and PING state.
///
/// Loop-thread only. The nghttp2 callbacks (ClientCallbacks.swift) update the streams and mark what changed; the
/// owning `ClientCore` decides where requests go.
final class ClientConnection: SessionConnection {
    unowned let core: ClientCore
    /// Streams by id, holding the requests in flight.
    private(set) var streams: [Int32: PendingRequest] = [:]
    /// The peer's first SETTINGS arrived: its stream limit is known.
    private(set) var receivedSettings = false
    /// A response on this connection proved the peer accepted our credentials (lifts `streamsUntilAuthenticated`).
    var isAuthenticated = false
    /// The peer sent GOAWAY: no new streams; streams above this id were not processed.
    private(set) var goAwayLastStreamID: Int32?
    /// No new streams (recycled, or GOAWAY received); closes once its streams are done.
    private(set) var isRetiring = false
    private var pingSentAt: UInt64?
    private var pingTimer: LoopTimer?
    private var connectTimer: LoopTimer?

    init(core: ClientCore, transport: Transport, connected: Bool) {
        self.core = core
        super.init(loop: core.loop, transport: transport, phase: connected ? .handshaking : .connecting)
    }

    /// Open for new streams: handshake done, the peer's SETTINGS known, not retiring.
    var isReady: Bool { phase == .open && receivedSettings && !isRetiring && goAwayLastStreamID == nil }

    /// Streams this connection may still open now.
    var availableStreams: Int {
        guard isReady, let session else {
            return 0
        }
        var limit = min(
            core.configuration.maxConcurrentStreams,
            Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)))
        if !isAuthenticated, let first = core.configuration.streamsUntilAuthenticated {
            limit = min(limit, max(1, first))
        }
        return limit - streams.count
    }

    // MARK: Lifecycle

    func startConnectTimer() {
        let deadline = MonotonicClock.now() + core.configuration.connectTimeout.nanoseconds
        connectTimer = loop.schedule(at: deadline) { [weak self] in
            guard let self, !self.isClosed, !self.receivedSettings else {
                return
            }
            self.close(HTTP2Error(.connectFailed, "no HTTP/2 connection within the connect timeout"))
        }
    }

    override func makeSession() throws(HTTP2Error) -> OpaquePointer {
        var session: OpaquePointer?
        let result = nghttp2_session_client_new(
            &session, ClientCallbacks.shared.pointer,
            Unmanaged.passUnretained(self).toOpaque())
        guard result == 0, let session else {
            throw HTTP2Error(.protocolError, "nghttp2_session_client_new failed (\(result))")
        }
        // Our receive windows: large, so responses are never throttled by flow control on a busy connection.
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20)
        return session
    }

    override func sessionDidOpen() {
        schedulePingCheck(at: lastReadTime + core.configuration.pingInterval.nanoseconds)
    }

    override func didProcessInput() {
        core.connectionDidProcessInput(self)
    }

    override func connectionDidClose(_ error: HTTP2Error?) {
        connectTimer?.cancel()
        pingTimer?.cancel()
        let orphans = Array(streams.values)
        streams.removeAll()
        core.connectionClosed(self, error: error, orphans: orphans)
    }

    /// Stops taking streams; closes once the open ones are done.
    func retire() {
        guard !isRetiring else {
            return
        }
        isRetiring = true
        finishIfIdle()
    }

    /// A retiring connection without streams says goodbye (GOAWAY NO_ERROR) and closes once that left.
    func finishIfIdle() {
        guard isRetiring || goAwayLastStreamID != nil, streams.isEmpty, !isClosed else {
            return
        }
        guard let session, phase == .open else {
            close(nil)
            return
        }
        _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
        scheduleFlush()
    }

    // MARK: Requests

    /// Opens a stream for `request`. Fails the request when nghttp2 refuses it.
    func submit(_ request: PendingRequest) {
        guard let session else {
            request.complete(.failure(HTTP2Error(.connectionLost, "the connection is not open")))
            return
        }
        request.startStream()
        let message = request.request
        let scheme = core.upstream.scheme, authority = core.upstream.authority
        let hasBody = !message.body.isEmpty
        let addLength = hasBody && !message.headers.contains(where: { $0.name == "content-length" })
        // Sized exactly (names, values, and the longest content-length): the block never grows mid-way.
        var byteCount =
            7 + message.method.utf8.count + 7 + scheme.utf8.count + 10 + authority.utf8.count + 5
            + message.path.utf8.count
        for header in message.headers {
            byteCount += header.name.utf8.count + header.value.utf8.count
        }
        if addLength {
            byteCount += 14 + HeaderBlock.decimalBytes
        }
        let block = headerBlock
        block.begin(fields: 4 + message.headers.count + 1, byteCount: byteCount)
        block.append(":method", message.method)
        block.append(":scheme", scheme)
        block.append(":authority", authority)
        block.append(":path", message.path)
        for header in message.headers {
            block.append(header.name, header.value, neverIndexed: header.neverIndexed)
        }
        if addLength {
            block.append("content-length", decimal: message.body.count)
        }
        var provider = nghttp2_data_provider()
        provider.read_callback = heraldClientReadBody
        let streamID = block.withNameValues { pairs, count in
            if hasBody {
                return nghttp2_submit_request(session, nil, pairs, count, &provider, nil)
            }
            return nghttp2_submit_request(session, nil, pairs, count, nil, nil)
        }
        guard streamID > 0 else {
            request.complete(
                .failure(
                    HTTP2Error(
                        .protocolError,
                        "cannot submit: \(String(cString: nghttp2_strerror(streamID)))")))
            return
        }
        request.attempts += 1
        request.connection = self
        request.streamID = streamID
        streams[streamID] = request
        scheduleFlush()
    }

    /// Cancels a stream still open (the request timed out): RST_STREAM CANCEL. A finished stream is never reset.
    func cancel(streamID: Int32) {
        guard let session, streams[streamID] != nil else {
            return
        }
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
        scheduleFlush()
    }

    func stream(_ id: Int32) -> PendingRequest? {
        streams[id]
    }

    /// Forgets a stream (closed by nghttp2 or never sent); returns it if it was still known.
    func removeStream(_ id: Int32) -> PendingRequest? {
        streams.removeValue(forKey: id)
    }

    // MARK: Frames (called from the callbacks)

    func didReceiveSettings() {
        if !receivedSettings {
            receivedSettings = true
            connectTimer?.cancel()
            core.counters.connectionsReady.increment()
            core.connectionReady(self)
        }
    }

    func didReceiveGoAway(lastStreamID: Int32) {
        goAwayLastStreamID = lastStreamID
        core.counters.goAwaysReceived.increment()
    }

    func didReceivePingAck() {
        if pingSentAt != nil {
            pingSentAt = nil
            core.counters.pingsAnswered.increment()
        }
    }

    /// The peer will not process this stream (above GOAWAY's last id, or never sent before a GOAWAY).
    func isUnprocessedByGoAway(_ streamID: Int32) -> Bool {
        guard let last = goAwayLastStreamID else {
            return false
        }
        return streamID > last
    }

    // MARK: PING

    private func schedulePingCheck(at deadline: UInt64) {
        pingTimer?.cancel()
        pingTimer = loop.schedule(at: deadline) { [weak self] in
            self?.checkPing()
        }
    }

    /// PING after `pingInterval` without input; close when a PING stays unanswered for as long.
    private func checkPing() {
        guard phase == .open, let session else {
            return
        }
        let interval = core.configuration.pingInterval.nanoseconds
        let now = MonotonicClock.now()
        if let sent = pingSentAt {
            if now &- sent >= interval {
                close(HTTP2Error(.connectionLost, "PING unanswered"))
            } else {
                schedulePingCheck(at: sent + interval)
            }
            return
        }
        if now &- lastReadTime >= interval {
            var opaque: UInt64 = now
            _ = withUnsafeBytes(of: &opaque) { raw in
                nghttp2_submit_ping(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                    raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            pingSentAt = now
            core.counters.pingsSent.increment()
            scheduleFlush()
            schedulePingCheck(at: now + interval)
        } else {
            schedulePingCheck(at: lastReadTime + interval)
        }
    }
}
