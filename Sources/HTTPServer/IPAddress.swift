#if canImport(Glibc)
    import Glibc
#endif

/// A numeric IPv4 or IPv6 address: its bytes in network order, 4 or 16. The one parser of address text in the
/// server (listening addresses, a request's peer, the proxies allowed to name a client).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// 4 or 16 bytes in network order; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// "192.0.2.1", "2001:db8::1" or "[2001:db8::1]", surrounding spaces allowed; nil for anything else (a
    /// name, a port, a zone).
    public init?(_ text: some StringProtocol) {
        var literal = text.trimmingASCIIWhitespace()
        if literal.hasPrefix("["), literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, how a dual-stack socket shows an IPv4 peer) as the IPv4
    /// address it is; any other address as it is.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff else {
            return self
        }
        return IPAddress(bytes: Array(bytes[12...]))!
    }

    /// The usual text: dotted quad, or RFC 5952 IPv6.
    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(bytes.count == 4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// An address block: "10.0.0.0/8", "2001:db8::/32", or one address ("192.0.2.7" is 192.0.2.7/32). IPv4 blocks also
/// hold the IPv4-mapped forms of their addresses.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int

    /// Nil unless `text` is an address, optionally followed by `/` and a prefix length that fits it.
    public init?(_ text: some StringProtocol) {
        let parts = text.trimmingASCIIWhitespace().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let parsed = IPAddress(parts[0]) else { return nil }
        let bits = parsed.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(parts[1]), value <= bits
            else { return nil }
            length = value
        }
        // `::ffff:10.0.0.0/104` is the IPv4 block 10.0.0.0/8.
        let address = parsed.unmapped
        if address.bytes.count == 4 && bits == 128 {
            guard length >= 96 else { return nil }
            length -= 96
        }
        self.address = IPAddress(bytes: Self.masked(address.bytes, length))!
        self.prefixLength = length
    }

    /// Whether `candidate` (or the IPv4 address it maps) lies in this block.
    public func contains(_ candidate: IPAddress) -> Bool {
        let bytes = candidate.unmapped.bytes
        return bytes.count == address.bytes.count && Self.masked(bytes, prefixLength) == address.bytes
    }

    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        }
    }
}
