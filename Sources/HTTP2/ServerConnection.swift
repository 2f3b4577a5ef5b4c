import CNghttp2

/// One client connection of an `HTTP2Server`: an nghttp2 server session and its request streams.
///
/// Loop-thread only. Complete requests go to the handler from the frame callback; answers submitted inline are
/// written with everything else at the end of the loop iteration.
final class ServerConnection: SessionConnection {
    let id: UInt64
    unowned let context: ServerLoopContext
    private(set) var streams: [Int32: ServerStream] = [:]
    /// The previous request's headers, to reuse their Strings (see RecentHeaders).
    let recentHeaders = RecentHeaders()
    private var closeRequested = false
    /// Set once GOAWAY was submitted: streams above it are unprocessed (the client resends them), so
    /// they are neither handed to the handler nor answered.
    private var goAwayLastStreamID: Int32?

    init(id: UInt64, context: ServerLoopContext, transport: Transport) {
        self.id = id
        self.context = context
        super.init(loop: context.loop, transport: transport, phase: .handshaking)
    }

    override func makeSession() throws(HTTP2Error) -> OpaquePointer {
        var session: OpaquePointer?
        let result = nghttp2_session_server_new2(
            &session, ServerCallbacks.shared.pointer,
            Unmanaged.passUnretained(self).toOpaque(),
            ServerCallbacks.shared.option)
        guard result == 0, let session else {
            throw HTTP2Error(.protocolError, "nghttp2_session_server_new2 failed (\(result))")
        }
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: UInt32(clamping: context.configuration.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20)
        return session
    }

    /// A TLS client that sent no ALPN extension gets HTTP/2 with prior knowledge, as APNs gives aioapns and pushy.
    /// One that offered ALPN without "h2" never gets here: the selection callback in `TLSContext` ends
    /// that handshake with a no_application_protocol alert. So a finished handshake means "h2" or no ALPN at all.
    override var handshakeAllowsHTTP2: Bool { true }

    override func didProcessInput() {
        if closeRequested {
            close(nil)
        }
    }

    override func flush() {
        if closeRequested {
            close(nil)
            return
        }
        super.flush()
    }

    override func connectionDidClose(_ error: HTTP2Error?) {
        streams.removeAll()
        context.connectionClosed(self)
    }

    // MARK: Streams (from the callbacks)

    func beginStream(_ streamID: Int32) {
        streams[streamID] = ServerStream()
    }

    func stream(_ streamID: Int32) -> ServerStream? {
        streams[streamID]
    }

    func endStream(_ streamID: Int32) {
        streams.removeValue(forKey: streamID)
    }

    /// The request on `streamID` is complete: answer 413 or hand it to the handler.
    func requestComplete(_ streamID: Int32) {
        guard let stream = streams[streamID], !stream.isDispatched else {
            return
        }
        stream.isDispatched = true
        if let last = goAwayLastStreamID, streamID > last {
            return
        }
        if stream.isTooLarge {
            let body = Array(#"{"reason":"PayloadTooLarge"}"#.utf8)
            respond(
                streamID: streamID,
                HTTP2Response(
                    status: 413, headers: [HTTP2Header("content-type", "application/json")],
                    body: body))
            return
        }
        let request = HTTP2ServerRequest(
            method: stream.method, path: stream.path, authority: stream.authority,
            scheme: stream.scheme, headers: stream.headers, body: stream.body,
            connectionID: id, streamID: streamID)
        stream.headers = []
        stream.body = []
        context.handler.handle(
            request,
            responder: HTTP2ServerResponder(
                loop: loop, connection: self,
                streamID: streamID))
    }

    // MARK: Answers (from the responder, on the loop thread)

    func respond(streamID: Int32, _ response: HTTP2Response) {
        guard let session, let stream = streams[streamID], !stream.isAnswered else {
            return
        }
        stream.isAnswered = true
        if let last = goAwayLastStreamID, streamID > last {
            return
        }
        let status = statusText(response.status)
        var byteCount = 7 + status.utf8.count
        for header in response.headers {
            byteCount += header.name.utf8.count + header.value.utf8.count
        }
        let block = headerBlock
        block.begin(fields: 1 + response.headers.count, byteCount: byteCount)
        block.append(":status", status)
        for header in response.headers {
            block.append(header.name, header.value, neverIndexed: header.neverIndexed)
        }
        let result: Int32
        if response.body.isEmpty {
            result = block.withNameValues { pairs, count in
                nghttp2_submit_response(session, streamID, pairs, count, nil)
            }
        } else {
            stream.responseBody = response.body
            var provider = nghttp2_data_provider()
            provider.read_callback = heraldServerReadBody
            result = block.withNameValues { pairs, count in
                nghttp2_submit_response(session, streamID, pairs, count, &provider)
            }
        }
        if result != 0 {
            _ = nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID,
                NGHTTP2_INTERNAL_ERROR.rawValue)
        }
        scheduleFlush()
    }

    func reset(streamID: Int32) {
        guard let session, let stream = streams[streamID], !stream.isAnswered else {
            return
        }
        stream.isAnswered = true
        _ = nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID,
            NGHTTP2_INTERNAL_ERROR.rawValue)
        scheduleFlush()
    }

    /// Drops the connection at the next safe point (never inside an nghttp2 callback).
    func requestClose() {
        guard !isClosed else {
            return
        }
        closeRequested = true
        scheduleFlush()
    }

    /// GOAWAY with last_stream_id below `streamID`; nghttp2 closes the later streams once it left and ends the
    /// session when the earlier ones are answered.
    func goAway(before streamID: Int32, debugData: [UInt8]) {
        guard let session, !isClosed else {
            return
        }
        let lastStreamID = max(0, streamID - 2)
        goAwayLastStreamID = min(goAwayLastStreamID ?? lastStreamID, lastStreamID)
        _ = debugData.withUnsafeBufferPointer { data in
            nghttp2_submit_goaway(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, NGHTTP2_NO_ERROR.rawValue,
                data.baseAddress, data.count)
        }
        scheduleFlush()
    }

    /// Stops the connection for a server shutdown: closes it at once (clients see a connection loss).
    func shutdown() {
        close(nil)
    }
}

/// The decimal text of a status code; the common ones without formatting.
private func statusText(_ status: Int) -> String {
    switch status {
    case 200: return "200"
    case 204: return "204"
    case 400: return "400"
    case 403: return "403"
    case 404: return "404"
    case 410: return "410"
    case 413: return "413"
    case 429: return "429"
    case 500: return "500"
    case 503: return "503"
    default: return String(status)
    }
}
