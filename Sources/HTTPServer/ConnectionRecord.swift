import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One open connection, stored as libmicrohttpd's socket context (retained once; released when it closes).
final class ConnectionRecord: Sendable {
    let fd: Int32
    /// When the current request started to arrive (monotonic ns), or -1 while a handler has it.
    let readingSince = Atomic<Int64>(0)
    let isCut = Atomic<Bool>(false)
    /// Length of the request target as the URI-log callback saw it (a C string, so ending at a raw NUL);
    /// compared with its length on the request line. Only the connection's I/O thread touches it.
    let targetLength = Atomic<Int>(-1)
    /// Whether the answer to the current request may leave the connection open (HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`); set when its headers arrive.
    let requestKeepsAlive = Atomic<Bool>(true)
    /// The client address this connection is counted under (`ConnectionAdmission`), or nil when it is not counted
    /// under one (no per-address limit, or refused).
    let countedAddress: ClientAddress?
    /// Set when the connection was opened over a limit (the server's connections or its address's): its first
    /// request is answered with this and the connection closed. Nil for an admitted connection, which counts
    /// against the server's limit until it closes.
    let refusal: HTTPRejection?
    unowned let context: ServerContext

    init(fd: Int32, context: ServerContext, countedAddress: ClientAddress?, refusal: HTTPRejection?) {
        self.fd = fd
        self.context = context
        self.countedAddress = countedAddress
        self.refusal = refusal
        readingSince.store(monotonicNanoseconds(), ordering: .relaxed)
    }
}

/// Now on the monotonic clock, in nanoseconds (the read deadline's clock).
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
