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
    unowned let context: ServerContext

    init(fd: Int32, context: ServerContext) {
        self.fd = fd
        self.context = context
        readingSince.store(monotonicNanoseconds(), ordering: .relaxed)
    }
}

/// Now on the monotonic clock, in nanoseconds (the read deadline's clock).
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
