import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Non-blocking TCP socket operations, each through `systemCall` (EINTR retried, typed errors).
enum Socket {
    /// A new non-blocking, close-on-exec TCP socket.
    static func make(family: Int32) throws(SystemCallError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return try systemCall("socket") { socket(family, type, 0) }
    }

    /// Starts connecting. True when connected at once; false when in progress (wait for writability, then
    /// read `pendingError`).
    static func connect(_ fd: Int32, to address: SocketAddress) throws(SystemCallError) -> Bool {
        do {
            _ = try systemCall("connect") {
                address.withSockAddr { pointer, length in Glibc.connect(fd, pointer, length) }
            }
            return true
        } catch  where error.errorNumber == EINPROGRESS {
            return false
        }
    }

    /// SO_ERROR: the outcome of a non-blocking connect (0 when connected).
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) != 0 {
            return errno
        }
        return value
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemCallError) {
        var value = value
        _ = try systemCall("setsockopt") {
            setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Disables Nagle: HTTP/2 frames are written in batches already, small ones (PING, SETTINGS ACK) must not wait.
    static func setNoDelay(_ fd: Int32) {
        try? setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// A listening socket bound to `address` (SO_REUSEADDR, optionally SO_REUSEPORT).
    static func listen(on address: SocketAddress, backlog: Int32, reusePort: Bool) throws(SystemCallError) -> Int32 {
        let fd = try make(family: address.family)
        do {
            try setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if reusePort {
                try setOption(fd, level: SOL_SOCKET, name: SO_REUSEPORT, value: 1)
            }
            _ = try systemCall("bind") { address.withSockAddr { pointer, length in bind(fd, pointer, length) } }
            _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Accepts one connection, made non-blocking; nil when none is waiting.
    static func accept(_ listener: Int32) throws(SystemCallError) -> Int32? {
        let fd: Int32
        do {
            fd = try systemCall("accept") { Glibc.accept(listener, nil, nil) }
        } catch  where error.wouldBlock {
            return nil
        }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// The local port a socket is bound to.
    static func localPort(_ fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else {
            return 0
        }
        return withUnsafeBytes(of: storage) { raw in
            if Int32(storage.ss_family) == AF_INET6 {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }
}
