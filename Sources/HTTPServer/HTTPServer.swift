import CMicroHTTPD
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

    /// Starts listening at once.
    ///
    /// - Parameters:
    ///   - tooLarge: builds the answer for a body over `maxBodyBytes` (typically a 413 the caller renders).
    ///   - handler: answers one complete request; runs on a worker thread and may block.
    /// - Throws: `HTTPServerError` ("invalid_configuration", "bind_failed", "start_failed").
    public init(
        configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
        tooLarge: @escaping @Sendable () -> HTTPResponse,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try configuration.validate()
        let address = try BindAddress(host: configuration.host, port: configuration.port)
        let context = ServerContext(
            maxBodyBytes: configuration.maxBodyBytes,
            handlerThreads: configuration.dispatch == .inline ? nil : configuration.threadCount,
            tooLarge: tooLarge,
            handler: handler
        )
        try context.pool?.start()
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
        var flags = MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue
        if context.pool != nil {
            flags |= MHD_ALLOW_SUSPEND_RESUME.rawValue
        }
        if address.isIPv6 {
            flags |= MHD_USE_IPv6.rawValue
        }
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        var messageBuffer = [CChar](repeating: 0, count: 512)
        var errorNumber: Int32 = 0
        let daemon = messageBuffer.withUnsafeMutableBufferPointer { message in
            address.withSockAddr { socketAddress in
                CMicroHTTPD_start(
                    flags,
                    configuration.port,
                    socketAddress,
                    UInt32(configuration.dispatch.ioThreadCount(threadCount: configuration.threadCount)),
                    UInt32(configuration.connectionLimit),
                    UInt32(configuration.connectionTimeoutSeconds),
                    heraldHTTPAccessHandler,
                    contextPointer,
                    heraldHTTPRequestCompleted,
                    contextPointer,
                    message.baseAddress,
                    message.count,
                    &errorNumber
                )
            }
        }
        if let daemon {
            return daemon
        }
        let detail = messageBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let message = "cannot listen on \(configuration.host) port \(configuration.port): "
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
