import Glibc

/// The process's limit on open file descriptors (RLIMIT_NOFILE). A service started by systemd or a login shell gets
/// a soft limit of 1,024 under a hard limit hundreds of times larger: below what the intake's default connection
/// limit, libmicrohttpd's reserve and the database pool need together, so connections past it would fail to be
/// accepted (EMFILE) instead of being served or answered 503. The soft limit is raised to the hard one at start,
/// as Go's runtime and nginx's `worker_rlimit_nofile` do; only the hard limit needs the operator.
public enum FileDescriptorLimit {
    public struct Limits: Sendable, Equatable {
        public let soft: Int
        public let hard: Int
    }

    /// The limits now.
    public static func current() -> Limits {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Limits(soft: 0, hard: 0) }
        return Limits(soft: Self.count(limit.rlim_cur), hard: Self.count(limit.rlim_max))
    }

    /// Raises the soft limit to the hard one and returns the limits then in force (unchanged if the kernel refused).
    @discardableResult
    public static func raiseToHard() -> Limits {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return current()
    }

    /// RLIM_INFINITY (all ones) as Int.max.
    private static func count(_ value: rlim_t) -> Int {
        value >= rlim_t(Int.max) ? Int.max : Int(value)
    }
}
