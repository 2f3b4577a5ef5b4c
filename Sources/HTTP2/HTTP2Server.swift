import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/2 server (TLS with ALPN h2, or cleartext h2c with prior knowledge) on nghttp2 and epoll.
///
/// Each of `configuration.loopCount` loop threads owns a listening socket (SO_REUSEPORT when there are several,
/// so the kernel spreads connections) and the connections it accepted. The handler runs on the loop thread of
/// the request's connection.
public final class HTTP2Server: Sendable {
    public let configuration: HTTP2ServerConfiguration
    private let handler: any HTTP2ServerHandler
    private let tls: TLSContext?
    private let connectionIDs = ServerConnectionIDs()
    private let running = Mutex<[RunningLoop]?>(nil)
    private let boundPort = Atomic<Int>(0)

    private struct RunningLoop: @unchecked Sendable {
        let loop: EventLoop
        /// Only touched on `loop`'s thread (through `execute`).
        let context: ServerLoopContext
    }

    /// Validates the configuration and loads the certificate; `start()` listens.
    public init(configuration: HTTP2ServerConfiguration, handler: any HTTP2ServerHandler) throws(HTTP2Error) {
        guard (0..<65536).contains(configuration.port) else {
            throw HTTP2Error(.invalidConfiguration, "port must be 0...65535")
        }
        guard configuration.maxConcurrentStreams >= 1, configuration.maxBodyBytes >= 0,
            configuration.loopCount >= 1
        else {
            throw HTTP2Error(.invalidConfiguration, "maxConcurrentStreams and loopCount must be at least 1")
        }
        switch (configuration.tlsCertificateFile, configuration.tlsKeyFile) {
        case (let certificate?, let key?):
            tls = try TLSContext.server(certificateFile: certificate, keyFile: key)
        case (nil, nil):
            tls = nil
        default:
            throw HTTP2Error(.invalidConfiguration, "give both tlsCertificateFile and tlsKeyFile, or neither")
        }
        IgnoreSIGPIPE.once()
        self.configuration = configuration
        self.handler = handler
    }

    deinit {
        stop()
    }

    /// The bound port (the chosen one when the configuration asked for 0); 0 before `start()`.
    public var port: Int {
        boundPort.load(ordering: .relaxed)
    }

    /// Binds, listens and starts the loop threads. Throws `.connectFailed` when the address cannot be bound.
    public func start() throws(HTTP2Error) {
        try running.withLock { (running) throws(HTTP2Error) in
            guard running == nil else {
                return
            }
            guard var address = SocketAddress(numericHost: configuration.host, port: configuration.port) else {
                throw HTTP2Error(.invalidConfiguration, "host must be an IPv4 or IPv6 address")
            }
            let reusePort = configuration.loopCount > 1
            var listeners: [Int32] = []
            do {
                for _ in 0..<configuration.loopCount {
                    let fd = try Socket.listen(on: address, backlog: 1024, reusePort: reusePort)
                    listeners.append(fd)
                    if address.port == 0 {
                        // Every further listener shares the port the kernel picked.
                        address = SocketAddress(numericHost: configuration.host, port: Socket.localPort(fd))!
                    }
                }
            } catch {
                listeners.forEach { close($0) }
                throw HTTP2Error(
                    .connectFailed, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
            }
            var loops: [RunningLoop] = []
            for (index, listener) in listeners.enumerated() {
                let loop: EventLoop
                do throws(HTTP2Error) {
                    loop = try EventLoop(name: "http2-server-\(index)")
                } catch {
                    loops.forEach { Self.stop($0) }
                    listeners[index...].forEach { close($0) }
                    throw error
                }
                let context = ServerLoopContext(
                    loop: loop, configuration: configuration, handler: handler, tls: tls,
                    connectionIDs: connectionIDs, listener: listener)
                let running = RunningLoop(loop: loop, context: context)
                loop.execute { running.context.start() }
                loops.append(running)
            }
            boundPort.store(address.port, ordering: .relaxed)
            running = loops
        }
    }

    /// Closes the listeners and every connection and joins the loop threads. Idempotent; a stopped server cannot
    /// be started again (make a new one, on the same port if you like).
    public func stop() {
        let loops = running.withLock { running -> [RunningLoop] in
            defer { running = [] }
            return running ?? []
        }
        loops.forEach { Self.stop($0) }
    }

    private static func stop(_ running: RunningLoop) {
        running.loop.execute { running.context.stop() }
        running.loop.stop()
    }
}
