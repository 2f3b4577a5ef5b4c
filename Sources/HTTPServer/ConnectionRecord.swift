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
    /// The client address this connection is counted under, or nil when it is not counted (no per-address limit,
    /// or over it).
    let countedAddress: ClientAddress?
    /// Opened while its address had its limit of connections: its first request is refused.
    let isOverAddressLimit: Bool
    unowned let context: ServerContext

    init(fd: Int32, context: ServerContext, countedAddress: ClientAddress?, isOverAddressLimit: Bool) {
        self.fd = fd
        self.context = context
        self.countedAddress = countedAddress
        self.isOverAddressLimit = isOverAddressLimit
        readingSince.store(monotonicNanoseconds(), ordering: .relaxed)
    }
}

/// Now on the monotonic clock, in nanoseconds (the read deadline's clock).
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
