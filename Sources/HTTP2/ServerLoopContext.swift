import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One loop of an `HTTP2Server`: its listening socket and the connections it accepted. Loop-thread only.
final class ServerLoopContext: EventHandler {
    let loop: EventLoop
    let configuration: HTTP2ServerConfiguration
    let handler: any HTTP2ServerHandler
    private let tls: TLSContext?
    private let connectionIDs: ServerConnectionIDs
    private let listener: Int32
    private var listenerToken: UInt64 = 0
    private var connections: [UInt64: ServerConnection] = [:]
    private var isStopped = false

    init(
        loop: EventLoop, configuration: HTTP2ServerConfiguration, handler: any HTTP2ServerHandler, tls: TLSContext?,
        connectionIDs: ServerConnectionIDs, listener: Int32
    ) {
        self.loop = loop
        self.configuration = configuration
        self.handler = handler
        self.tls = tls
        self.connectionIDs = connectionIDs
        self.listener = listener
    }

    /// Starts accepting (on the loop thread).
    func start() {
        do {
            listenerToken = try loop.register(listener, self)
        } catch {
            // Registration of a fresh socket on a fresh epoll cannot fail short of resource exhaustion.
            let message = "HTTP2Server: cannot watch the listening socket: \(error)\n"
            _ = message.withCString { write(2, $0, strlen($0)) }
        }
    }

    /// The listening socket is readable: accept everything waiting.
    func handleEvent(_ events: UInt32) {
        while !isStopped {
            let fd: Int32
            do {
                guard let accepted = try Socket.accept(listener) else {
                    return
                }
                fd = accepted
            } catch {
                // EMFILE and friends: drop this round; the next connection attempt wakes us again.
                return
            }
            Socket.setNoDelay(fd)
            let id = connectionIDs.next()
            do {
                let transport = try Transport(fd: fd, tls: tls, isServer: true)
                let connection = ServerConnection(id: id, context: self, transport: transport)
                connections[id] = connection
                try connection.start()
            } catch {
                if let connection = connections.removeValue(forKey: id) {
                    connection.close(nil)
                } else {
                    close(fd)
                }
            }
        }
    }

    func connectionClosed(_ connection: ServerConnection) {
        connections.removeValue(forKey: connection.id)
    }

    /// Closes the listener and every connection.
    func stop() {
        guard !isStopped else {
            return
        }
        isStopped = true
        if listenerToken != 0 {
            loop.deregister(listener, token: listenerToken)
        }
        close(listener)
        for connection in Array(connections.values) {
            connection.shutdown()
        }
        connections.removeAll()
    }
}

/// Connection ids unique across a server's loops.
final class ServerConnectionIDs: Sendable {
    private let last = Atomic<UInt64>(0)

    func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
