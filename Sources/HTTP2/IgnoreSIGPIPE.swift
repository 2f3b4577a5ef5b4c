#if canImport(Glibc)
    import Glibc
#endif

/// OpenSSL writes to sockets with plain `write`, which raises SIGPIPE on a connection the peer closed (our own
/// sends use MSG_NOSIGNAL). The signal would kill the process; ignore it once, process-wide.
enum IgnoreSIGPIPE {
    private static let done: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    static func once() {
        _ = done
    }
}
