import CNghttp2

#if canImport(Glibc)
    import Glibc
#endif

/// What client and server connections share: a transport, an nghttp2 session driven with `mem_recv` /
/// `mem_send`, and the output buffer.
///
/// Loop-thread only. Reading happens on every epoll event until the socket has nothing more; writing happens in
/// `flush()`, which the loop runs once per iteration for every connection that asked (`scheduleFlush()`), so the
/// frames produced by a whole batch of events leave in one write of up to `writeBatchBytes`. Closing never happens
/// inside an nghttp2 callback (deleting the session there would pull it from under nghttp2): callbacks only mark
/// state, and `handleEvent`, `flush` and timers act on it.
class SessionConnection: EventHandler, FlushHandler {
    enum Phase {
        /// TCP connect in progress (clients only).
        case connecting
        case handshaking
        case open
        case closed
    }

    /// How much nghttp2 output is gathered before a write.
    static let writeBatchBytes = 64 * 1024

    let loop: EventLoop
    let transport: Transport
    private(set) var phase: Phase
    private(set) var session: OpaquePointer?
    private var output = OutputBuffer()
    /// Scratch for the header blocks this connection submits (see HeaderBlock).
    let headerBlock = HeaderBlock()
    private var token: UInt64 = 0
    private var flushRequested = false
    /// Monotonic time of the last bytes received (PING idleness).
    private(set) var lastReadTime: UInt64

    init(loop: EventLoop, transport: Transport, phase: Phase) {
        self.loop = loop
        self.transport = transport
        self.phase = phase
        lastReadTime = MonotonicClock.now()
    }

    deinit {
        if let session {
            nghttp2_session_del(session)
        }
    }

    var isClosed: Bool { phase == .closed }

    /// Adds the socket to the loop and handles whatever is already there.
    func start() throws(HTTP2Error) {
        do {
            token = try loop.register(transport.fd, self)
        } catch {
            throw HTTP2Error(.connectFailed, "cannot register the socket: \(error)")
        }
        handleEvent(0)
    }

    // MARK: Subclass hooks

    /// Creates the nghttp2 session (client or server) once the transport is ready; queue the initial SETTINGS.
    func makeSession() throws(HTTP2Error) -> OpaquePointer {
        fatalError("subclass must override")
    }

    /// The transport is ready and the session exists.
    func sessionDidOpen() {}

    /// Called once, after the socket closed and the session was deleted. `error` is nil after an orderly end
    /// (both sides done after GOAWAY, or `close()` on request).
    func connectionDidClose(_ error: HTTP2Error?) {}

    /// After a batch of input was handed to nghttp2 (outside its callbacks): act on what the callbacks marked.
    func didProcessInput() {}

    /// Whether the finished TLS handshake lets this connection speak HTTP/2: by default only when ALPN chose "h2".
    var handshakeAllowsHTTP2: Bool { transport.negotiatedH2 }

    // MARK: Events

    func handleEvent(_ events: UInt32) {
        if phase == .connecting {
            guard events != 0 else {
                return
            }
            let failure = Socket.pendingError(transport.fd)
            guard failure == 0 else {
                close(HTTP2Error(.connectFailed, "connect: \(String(cString: strerror(failure)))"))
                return
            }
            phase = .handshaking
        }
        if phase == .handshaking {
            guard advanceHandshake() else {
                return
            }
        }
        guard phase == .open else {
            return
        }
        readAvailable()
        guard phase == .open else {
            return
        }
        didProcessInput()
        scheduleFlush()
    }

    /// True once the connection is open.
    private func advanceHandshake() -> Bool {
        switch transport.handshake() {
        case .wouldBlock:
            return false
        case .failed(let reason):
            close(HTTP2Error(.tlsFailed, reason))
            return false
        case .done:
            break
        }
        guard handshakeAllowsHTTP2 else {
            close(HTTP2Error(.tlsFailed, "the peer did not negotiate h2 with ALPN"))
            return false
        }
        do {
            session = try makeSession()
        } catch {
            close(error)
            return false
        }
        phase = .open
        sessionDidOpen()
        scheduleFlush()
        return true
    }

    private func readAvailable() {
        guard let session else {
            return
        }
        let buffer = loop.state.readBuffer
        var received = false
        while phase == .open {
            let result = transport.read(into: buffer)
            switch result {
            case .bytes(let count):
                received = true
                let consumed = nghttp2_session_mem_recv(
                    session, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self),
                    count)
                if consumed < 0 {
                    let reason = String(cString: nghttp2_strerror(Int32(consumed)))
                    // nghttp2 queued a GOAWAY for most errors: try to send it before closing.
                    writeOutput()
                    close(HTTP2Error(.protocolError, "HTTP/2: \(reason)"))
                    return
                }
            case .wouldBlock:
                if received {
                    lastReadTime = MonotonicClock.now()
                }
                return
            case .closed, .failed:
                close(Self.connectionLost(result, while: "read"))
                return
            }
        }
    }

    // MARK: Output

    func scheduleFlush() {
        guard !flushRequested, phase != .closed else {
            return
        }
        flushRequested = true
        loop.requestFlush(self)
    }

    func flush() {
        flushRequested = false
        guard phase == .open, let session else {
            return
        }
        writeOutput()
        guard phase == .open else {
            return
        }
        if output.isEmpty, nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 {
            // Both sides are done (GOAWAY exchanged, no streams left).
            close(nil)
        }
    }

    /// Moves nghttp2's pending frames to the socket until either runs dry or the socket is full.
    private func writeOutput() {
        guard let session else {
            return
        }
        while phase == .open {
            while output.count < Self.writeBatchBytes {
                var data: UnsafePointer<UInt8>?
                let length = nghttp2_session_mem_send(session, &data)
                if length < 0 {
                    close(HTTP2Error(.protocolError, "HTTP/2: \(String(cString: nghttp2_strerror(Int32(length))))"))
                    return
                }
                guard length > 0, let data else {
                    break
                }
                output.append(data, count: length)
            }
            if output.isEmpty {
                return
            }
            let result = transport.write(output.readable)
            switch result {
            case .bytes(let count):
                output.consume(count)
            case .wouldBlock:
                // EPOLLOUT (edge) brings us back through handleEvent -> scheduleFlush.
                return
            case .closed, .failed:
                close(Self.connectionLost(result, while: "write"))
                return
            }
        }
    }

    /// The error of a transport that closed or failed during `operation` (a read, a write).
    private static func connectionLost(_ result: Transport.IOResult, while operation: String) -> HTTP2Error {
        guard case .failed(let reason) = result else {
            return HTTP2Error(.connectionLost, "the peer closed the connection")
        }
        return HTTP2Error(.connectionLost, "\(operation) failed: \(reason)")
    }

    // MARK: Closing

    /// Closes at once: deregisters, closes the socket, deletes the session, then tells the subclass. Idempotent.
    /// Must not be called from inside an nghttp2 callback.
    func close(_ error: HTTP2Error?) {
        guard phase != .closed else {
            return
        }
        phase = .closed
        if token != 0 {
            loop.deregister(transport.fd, token: token)
            token = 0
        }
        transport.close()
        connectionDidClose(error)
        if let session {
            self.session = nil
            nghttp2_session_del(session)
        }
    }
}
