#if canImport(Glibc)
    import Glibc
#endif

/// A numeric listening address, parsed once and handed to libmicrohttpd as a `sockaddr`.
enum BindAddress {
    case ipv4(sockaddr_in)
    case ipv6(sockaddr_in6)

    /// A numeric IPv4 or IPv6 address ("[::1]" accepted too), parsed by `IPAddress`.
    init(host: String, port: UInt16) throws(HTTPServerError) {
        guard let address = IPAddress(host) else {
            throw .invalidConfiguration("host must be a numeric IPv4 or IPv6 address (got \"\(host)\")")
        }
        if address.bytes.count == 4 {
            var v4 = sockaddr_in()
            withUnsafeMutableBytes(of: &v4.sin_addr) { $0.copyBytes(from: address.bytes) }
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self = .ipv4(v4)
        } else {
            var v6 = sockaddr_in6()
            withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: address.bytes) }
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self = .ipv6(v6)
        }
    }

    var isIPv6: Bool {
        if case .ipv6 = self { return true }
        return false
    }

    /// Calls `body` with a pointer valid only during the call.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        switch self {
        case .ipv4(var address):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        case .ipv6(var address):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body)
            }
        }
    }
}
