import Dispatch

/// How the server listens and how much it accepts. Every argument has a default.
public struct HTTPServerConfiguration: Sendable {
    /// A numeric IPv4 or IPv6 address to listen on; "0.0.0.0" (the default) means every IPv4 interface.
    public var host: String
    /// The TCP port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: UInt16
    /// Handler threads: handlers may block (on Postgres, say), so this is the number of requests in flight.
    public var threadCount: Int
    /// Which threads run handlers; see `Dispatch`.
    public var dispatch: Dispatch
    /// The largest request body accepted; larger ones are answered with the `bodyTooLarge` rejection.
    public var maxBodyBytes: Int
    /// The few requests allowed a larger body (an authenticated icon upload): given a request's head, the
    /// limit to apply instead of `maxBodyBytes`, or nil for `maxBodyBytes`. Asked before the body is read,
    /// and only for a request whose body may be over `maxBodyBytes` (a larger Content-Length, or chunked).
    public var largerBodyLimit: (@Sendable (RequestHead) -> Int?)?
    /// The most connections served at once (shared out among libmicrohttpd's I/O threads, so at least one each).
    /// Up to a quarter more (at least 16) are accepted only to be answered, on their first request, with the
    /// `overloaded` rejection (503, `Retry-After: 1`, `Connection: close`): a client past the limit gets an answer
    /// rather than waiting in the kernel's accept queue until it gives up.
    public var connectionLimit: Int
    /// The connections open at once at most: `connectionLimit` and the reserve answered `overloaded`. Each holds a
    /// file descriptor, so the process's limit (`ulimit -n`) must be above it.
    public var acceptedConnectionLimit: Int { ConnectionAdmission.libraryLimit(for: connectionLimit) }
    /// The most connections open at once from one client address, so one client cannot take every slot of
    /// `connectionLimit`; 0 means no per-address limit. A connection opened beyond it is answered, on its first
    /// request, with the `tooManyConnections` rejection (503, `Retry-After: 1`, `Connection: close`) and closed;
    /// one that sends nothing is cut after a second (when there is a read deadline).
    public var perAddressConnectionLimit: Int
    /// An idle connection is closed after this many seconds without traffic; 0 never times out. Answers that leave
    /// a connection open carry `Keep-Alive: timeout=` one second less (from 2 s up), so clients retire idle
    /// connections first.
    public var connectionTimeoutSeconds: Int
    /// Each request must arrive whole (line, headers and body) within this many seconds of the connection
    /// opening or of its previous answer, however steadily it trickles in (slow-loris); 0 disables the deadline.
    /// The time a handler (or a deferred response) takes does not count.
    public var requestReadTimeoutSeconds: Int
    /// The longest request target (path and query, as sent) accepted; longer is 414.
    public var maxTargetBytes: Int
    /// The largest request line plus headers accepted; larger is 431.
    public var maxHeaderBytes: Int
    /// How long `stop()` waits for requests already received to be answered before closing connections.
    public var shutdownGracePeriod: Duration
    /// Handler threads only: a request that waited longer than this many milliseconds for a handler thread is
    /// answered with the `overloaded` rejection (503, `Retry-After: 1`) without running its handler; 0 waits
    /// forever. Past the machine's capacity the queue then stays as short as this limit, instead of every
    /// answer coming later and later, after its client has given up (and perhaps retried what was done).
    public var queueWaitLimitMilliseconds: Int
    /// Handler threads only: requests answered at once on their I/O thread, never queued nor refused as
    /// overloaded. Only for handlers that never block (a liveness check), so it stays true under overload.
    public var answeredAtOnce: (@Sendable (HTTPRequest) -> Bool)?
    /// The clock the queue wait limit is measured on (monotonic nanoseconds): the system's, or one a test moves.
    var queueClock: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }

    public init(
        host: String = "0.0.0.0",
        port: UInt16 = 8080,
        threadCount: Int = 8,
        dispatch: Dispatch = .handlerThreads(ioThreads: 2),
        maxBodyBytes: Int = 65_536,
        connectionLimit: Int = 1_024,
        perAddressConnectionLimit: Int = 256,
        connectionTimeoutSeconds: Int = 30,
        requestReadTimeoutSeconds: Int = 30,
        maxTargetBytes: Int = 8_192,
        maxHeaderBytes: Int = 16_384,
        shutdownGracePeriod: Duration = .seconds(5),
        queueWaitLimitMilliseconds: Int = 0
    ) {
        self.host = host
        self.port = port
        self.threadCount = threadCount
        self.dispatch = dispatch
        self.maxBodyBytes = maxBodyBytes
        self.connectionLimit = connectionLimit
        self.perAddressConnectionLimit = perAddressConnectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.requestReadTimeoutSeconds = requestReadTimeoutSeconds
        self.maxTargetBytes = maxTargetBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.shutdownGracePeriod = shutdownGracePeriod
        self.queueWaitLimitMilliseconds = queueWaitLimitMilliseconds
    }

    /// libmicrohttpd's per-connection pool (request line, headers, read buffer): twice the header limit, so
    /// the server's own 414/431 checks see a request before the pool overflows.
    var connectionMemoryLimit: Int {
        max(32_768, 2 * maxHeaderBytes + 16_384)
    }

    /// Which threads run handlers.
    public enum Dispatch: Sendable, Equatable {
        /// Handlers run on libmicrohttpd's own worker (I/O) threads, `threadCount` of them, each owning its
        /// connections for their lifetime. Fastest for handlers that answer at once; but a handler that blocks
        /// also stalls every other connection of its worker, and connections are not spread evenly (a worker
        /// accepts up to ten in a row), so fewer than `threadCount` requests may be in flight.
        case inline
        /// libmicrohttpd keeps `ioThreads` threads for the network; a complete request's connection is suspended
        /// and its handler runs on one of `threadCount` dedicated threads, so exactly `threadCount` requests can
        /// be in flight whichever connections they arrive on. Costs a thread hand-off per request.
        case handlerThreads(ioThreads: Int)

        /// libmicrohttpd's worker pool size for this mode.
        func ioThreadCount(threadCount: Int) -> Int {
            switch self {
            case .inline: threadCount
            case .handlerThreads(let ioThreads): ioThreads
            }
        }
    }

    /// Throws `invalid_configuration` naming the first value out of range.
    func validate() throws(HTTPServerError) {
        guard (1...1_024).contains(threadCount) else {
            throw .invalidConfiguration("threadCount must be between 1 and 1024 (got \(threadCount))")
        }
        if case .handlerThreads(let ioThreads) = dispatch, !(1...256).contains(ioThreads) {
            throw .invalidConfiguration("dispatch ioThreads must be between 1 and 256 (got \(ioThreads))")
        }
        guard maxBodyBytes >= 0, maxBodyBytes <= Int(Int32.max) else {
            throw .invalidConfiguration("maxBodyBytes must be between 0 and \(Int32.max) (got \(maxBodyBytes))")
        }
        let ioThreads = dispatch.ioThreadCount(threadCount: threadCount)
        guard connectionLimit >= ioThreads, connectionLimit <= Int(Int32.max) else {
            throw .invalidConfiguration(
                "connectionLimit must be at least the I/O thread count (\(ioThreads)) (got \(connectionLimit))"
            )
        }
        guard connectionTimeoutSeconds >= 0, connectionTimeoutSeconds <= Int(Int32.max) else {
            throw .invalidConfiguration(
                "connectionTimeoutSeconds must not be negative (got \(connectionTimeoutSeconds))"
            )
        }
        guard perAddressConnectionLimit >= 0, perAddressConnectionLimit <= Int(Int32.max) else {
            throw .invalidConfiguration(
                "perAddressConnectionLimit must not be negative (got \(perAddressConnectionLimit))"
            )
        }
        guard requestReadTimeoutSeconds >= 0, requestReadTimeoutSeconds <= 86_400 else {
            throw .invalidConfiguration(
                "requestReadTimeoutSeconds must be between 0 and 86400 (got \(requestReadTimeoutSeconds))"
            )
        }
        guard (64...1_048_576).contains(maxTargetBytes) else {
            throw .invalidConfiguration("maxTargetBytes must be between 64 and 1048576 (got \(maxTargetBytes))")
        }
        guard (1_024...1_048_576).contains(maxHeaderBytes), maxHeaderBytes >= maxTargetBytes else {
            throw .invalidConfiguration(
                "maxHeaderBytes must be between 1024 and 1048576 and at least maxTargetBytes (got \(maxHeaderBytes))"
            )
        }
        guard (0...3_600_000).contains(queueWaitLimitMilliseconds) else {
            throw .invalidConfiguration(
                "queueWaitLimitMilliseconds must be between 0 and 3600000 (got \(queueWaitLimitMilliseconds))"
            )
        }
        guard shutdownGracePeriod >= .zero else {
            throw .invalidConfiguration("shutdownGracePeriod must not be negative")
        }
    }
}
