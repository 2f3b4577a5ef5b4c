import CSystem

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address with its port.
struct SocketAddress: Sendable, CustomStringConvertible {
    private(set) var storage = sockaddr_storage()
    let length: socklen_t

    var family: Int32 { Int32(storage.ss_family) }

    /// The address of a numeric IPv4 or IPv6 literal, nil for anything else (a host name).
    init?(numericHost host: String, port: Int) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
            (storage, length) = Self.stored(v4)
            return
        }
        var v6 = sockaddr_in6()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(truncatingIfNeeded: port).bigEndian
            (storage, length) = Self.stored(v6)
            return
        }
        return nil
    }

    /// `address`, a `sockaddr_in` or `sockaddr_in6`, copied into a `sockaddr_storage`, with its length.
    private static func stored<Address>(_ address: Address) -> (sockaddr_storage, socklen_t) {
        var storage = sockaddr_storage()
        withUnsafeBytes(of: address) { source in
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: source) }
        }
        return (storage, socklen_t(MemoryLayout<Address>.size))
    }

    private init(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        self.length = length
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
    }

    /// Resolves a host name or literal (blocking: call it off the event loop). IPv4 addresses first.
    static func resolve(host: String, port: Int) throws(HTTP2Error) -> [SocketAddress] {
        if let numeric = SocketAddress(numericHost: host, port: port) {
            return [numeric]
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw HTTP2Error(.connectFailed, "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                addresses.append(SocketAddress(address, length: entry.pointee.ai_addrlen))
            }
            cursor = entry.pointee.ai_next
        }
        addresses.sort { $0.family == AF_INET && $1.family != AF_INET }
        guard !addresses.isEmpty else {
            throw HTTP2Error(.connectFailed, "cannot resolve \(host): no address")
        }
        return addresses
    }

    /// The port, host order.
    var port: Int {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                return Int(UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port))
            }
            return Int(UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port))
        }
    }

    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
        }
        let host = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as a `sockaddr` pointer.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }
}
