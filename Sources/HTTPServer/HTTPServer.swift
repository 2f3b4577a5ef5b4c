import CMicroHTTPD
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 server (keep-alive) on libmicrohttpd: an epoll loop per I/O thread.
///
/// Handlers are synchronous and may block (waiting on Postgres is intended): `threadCount` requests are in
/// flight at most, on dedicated handler threads or on libmicrohttpd's own threads (see
/// `HTTPServerConfiguration.Dispatch`). Request bodies and headers are never logged.
public final class HTTPServer: Sendable {
    /// The port actually bound (the chosen one when the configuration asked for 0).
    public let port: UInt16
    public let configuration: HTTPServerConfiguration
    /// What the C callbacks reach through their closure pointer (internal for tests).
    let context: ServerContext
    /// The running daemon; nil once stopped. Held while stopping so a second `stop()` waits for the first.
    private let daemon: Mutex<Daemon?>
    /// Cuts connections over the read deadline; nil when there is none.
    nonisolated(unsafe) private let sweeper: DispatchSourceTimer?

    /// Starts listening at once.
    ///
    /// - Parameters:
    ///   - rejection: builds the answer to a request refused before any handler sees it (bad target or
    ///     framing, sizes over the limits, or what libmicrohttpd refused by itself); the connection is closed
    ///     after it. Runs on an I/O thread: it must not block.
    ///   - handler: answers one complete request; runs on a worker thread and may block, or return
    ///     `HTTPResponse.deferred` to answer later without holding the thread.
    /// - Throws: `HTTPServerError` ("invalid_configuration", "bind_failed", "start_failed").
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        rejection: @escaping @Sendable (HTTPRejection) -> HTTPResponse = { $0.defaultResponse },
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try configuration.validate()
        let address = try BindAddress(host: configuration.host, port: configuration.port)
        let context = ServerContext(configuration: configuration, rejection: rejection, handler: handler)
        try context.pool?.start()
        _ = Self.installErrorHook
        let pointer: OpaquePointer
        do {
            pointer = try Self.start(configuration, address: address, context: context)
        } catch {
            context.pool?.shutdown()
            throw error
        }
        self.port = CMicroHTTPD_bound_port(pointer)
        self.configuration = configuration
        self.context = context
        self.daemon = Mutex(Daemon(pointer: pointer))
        self.sweeper = Self.startSweeper(context)
    }

    /// As above, with the default JSON rejections except an over-limit body, which `tooLarge` builds.
    public convenience init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        tooLarge: @escaping @Sendable () -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try self.init(
            configuration: configuration,
            rejection: { rejection in
                rejection == .bodyTooLarge ? tooLarge() : rejection.defaultResponse
            }, handler: handler)
    }

    /// Whether libmicrohttpd's own error pages are replaced by the rejection rendering in this process
    /// (CMicroHTTPD.c explains how); false would mean they stay HTML.
    public static var replacesLibraryErrorPages: Bool {
        CMicroHTTPD_error_hook_active() != 0
    }

    /// How long `stop()` waits for the 503s it gave deferred requests to be sent.
    static let deferredDrainPeriod = Duration.seconds(1)

    private static let installErrorHook: Void = {
        CMicroHTTPD_set_error_hook(heraldHTTPLibraryError)
    }()

    /// The read-deadline sweeper: checks every connection a few times per deadline, and at least twice a second
    /// (for connections over a limit).
    private static func startSweeper(_ context: ServerContext) -> DispatchSourceTimer? {
        guard context.requestReadTimeout > 0 else {
            return nil
        }
        // Connections over a limit (refused on their first request) are cut after `overLimitReadTimeout`.
        let interval = min(
            max(Int(context.requestReadTimeout / 1_000_000 / 8), 50),
            Int(ServerContext.overLimitReadTimeout / 1_000_000 / 2))
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "herald-http-read-deadline"))
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(interval))
        timer.setEventHandler { [weak context] in context?.cutLateConnections() }
        timer.resume()
        return timer
    }

    deinit {
        stop()
    }

    /// Stops the server; idempotent, and safe to call from several threads (later callers wait for the first).
    ///
    /// Stops accepting connections, lets requests already received finish and their answers go out (for up to
    /// `shutdownGracePeriod`; keep-alive clients are told `Connection: close`), then closes every connection.
    /// Returns only after every running handler has returned. Must not be called from inside a handler.
    public func stop() {
        daemon.withLock { daemon in
            guard let running = daemon else {
                return
            }
            daemon = nil
            context.isDraining.store(true, ordering: .relaxed)
            let listenSocket = MHD_quiesce_daemon(running.pointer)
            waitForOpenRequests(until: ContinuousClock.now + configuration.shutdownGracePeriod)
            // Deferred answers not given by now are 503; nothing may resume a connection after this.
            context.deferred.closeAll(
                with: context.rejection(
                    HTTPRejection(
                        status: 503, code: "shutting_down", message: "The server is stopping; retry.")))
            // Let those answers go out (the completion callback counts each) before connections are closed.
            waitForOpenRequests(until: ContinuousClock.now + Self.deferredDrainPeriod)
            sweeper?.cancel()
            context.connections.withLock { _ in context.isSweeping.store(false, ordering: .relaxed) }
            // Every suspended connection must be resumed before libmicrohttpd stops: the pool runs what it holds.
            context.pool?.shutdown()
            MHD_stop_daemon(running.pointer)
            if listenSocket >= 0 {
                close(listenSocket)
            }
        }
    }

    /// Requests received and not yet completed (answered or abandoned); for tests and metrics.
    var openRequestCount: Int {
        context.openRequests.load(ordering: .relaxed)
    }

    /// Connections admitted (counted against the limits) and not yet closed; for tests.
    public var admittedConnectionCount: Int {
        context.admission.admitted
    }

    private func waitForOpenRequests(until deadline: ContinuousClock.Instant) {
        while context.openRequests.load(ordering: .relaxed) > 0, ContinuousClock.now < deadline {
            usleep(1_000)
        }
    }

    private static func start(
        _ configuration: HTTPServerConfiguration,
        address: BindAddress,
        context: ServerContext
    ) throws(HTTPServerError) -> OpaquePointer {
        // Suspend/resume always: deferred answers need it in every dispatch mode.
        var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if address.isIPv6 {
            flags |= MHD_USE_IPv6.rawValue
        }
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        var messageBuffer = [CChar](repeating: 0, count: 512)
        var errorNumber: Int32 = 0
        let daemon = messageBuffer.withUnsafeMutableBufferPointer { message in
            address.withSockAddr { socketAddress in
                var settings = CMicroHTTPD_settings(
                    flags: flags,
                    port: configuration.port,
                    bind_address: socketAddress,
                    thread_pool_size: UInt32(
                        configuration.dispatch.ioThreadCount(threadCount: configuration.threadCount)),
                    connection_limit: UInt32(configuration.acceptedConnectionLimit),
                    connection_timeout_seconds: UInt32(configuration.connectionTimeoutSeconds),
                    connection_memory_limit: configuration.connectionMemoryLimit,
                    access_handler: heraldHTTPAccessHandler,
                    request_completed: heraldHTTPRequestCompleted,
                    notify_connection: heraldHTTPConnectionNotify,
                    uri_log: heraldHTTPTargetSeen,
                    callback_cls: contextPointer
                )
                return CMicroHTTPD_start(&settings, message.baseAddress, message.count, &errorNumber)
            }
        }
        if let daemon {
            return daemon
        }
        let detail = messageBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let message =
            "cannot listen on \(configuration.host) port \(configuration.port): "
            + (detail.isEmpty ? String(cString: strerror(errorNumber)) : detail)
        switch errorNumber {
        case EADDRINUSE, EADDRNOTAVAIL, EACCES:
            throw .bindFailed(message)
        default:
            throw .startFailed(message)
        }
    }
}

/// The daemon handle; only touched under the server's lock.
private struct Daemon: @unchecked Sendable {
    let pointer: OpaquePointer
}
