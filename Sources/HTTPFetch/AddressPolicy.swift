/// What kind of address an outbound connection would go to.
public enum AddressClass: String, Sendable, CaseIterable {
    /// Publicly routable unicast.
    case global
    /// 127.0.0.0/8, ::1.
    case loopback
    /// 0.0.0.0/8, :: (Linux connects these to the local host).
    case unspecified
    /// 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10 (site-local), 64:ff9b:1::/48 (local-use NAT64).
    case privateUse = "private"
    /// 169.254/16, fe80::/10.
    case linkLocal = "link_local"
    /// 100.64/10, carrier-grade NAT (RFC 6598).
    case sharedAddressSpace = "shared_address_space"
    /// 224/4, ff00::/8.
    case multicast
    /// 240/4 with the broadcast address, 192.0.0/24, 192.88.99/24, 100::/64, 2001::/23 (Teredo among them),
    /// and every IPv6 address outside 2000::/3 not named above.
    case reserved
    /// Cloud instance metadata services: 169.254.169.254, 100.100.100.200, fd00:ec2::254.
    case metadata
    /// 198.18/15, 2001:2::/48.
    case benchmarking
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    case documentation
    /// Not 4 or 16 bytes.
    case invalid
}

/// Which addresses outbound fetches (icons, webhooks: URLs a partner chose) may connect to.
///
/// Rules, applied to each address a connection is actually opened to (after DNS, for every redirect hop):
/// - a `global` address is allowed;
/// - `metadata` and `invalid` are always refused: no icon or webhook lives on an instance metadata service, and
///   it is the prize of server-side request forgery;
/// - every other class is refused unless `allowPrivateAddresses` (`HERALD_WEBHOOK_ALLOW_PRIVATE=1`, for tests
///   and receivers on a private network).
///
/// IPv6 forms that embed an IPv4 address are judged by that address: IPv4-mapped (::ffff:a.b.c.d),
/// IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
/// (2002:AABB:CCDD::/48), so `::ffff:127.0.0.1` is loopback.
public struct AddressPolicy: Sendable, Equatable {
    public var allowPrivateAddresses: Bool

    public init(allowPrivateAddresses: Bool = false) {
        self.allowPrivateAddresses = allowPrivateAddresses
    }

    /// Whether a connection to `address` (4 or 16 bytes, network order) may be opened.
    public func allows(_ address: [UInt8]) -> Bool {
        switch Self.classify(address) {
        case .global:
            return true
        case .metadata, .invalid:
            return false
        default:
            return allowPrivateAddresses
        }
    }

    /// The class of an IPv4 (4 bytes) or IPv6 (16 bytes) address in network order.
    public static func classify(_ address: [UInt8]) -> AddressClass {
        switch address.count {
        case 4:
            return classifyIPv4(address[0], address[1], address[2], address[3])
        case 16:
            return classifyIPv6(address)
        default:
            return .invalid
        }
    }

    private static func classifyIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> AddressClass {
        switch (a, b, c, d) {
        case (169, 254, 169, 254), (100, 100, 100, 200):
            return .metadata
        case (0, _, _, _):
            return .unspecified
        case (127, _, _, _):
            return .loopback
        case (10, _, _, _), (172, 16...31, _, _), (192, 168, _, _):
            return .privateUse
        case (169, 254, _, _):
            return .linkLocal
        case (100, 64...127, _, _):
            return .sharedAddressSpace
        case (198, 18...19, _, _):
            return .benchmarking
        case (192, 0, 2, _), (198, 51, 100, _), (203, 0, 113, _):
            return .documentation
        case (192, 0, 0, _), (192, 88, 99, _):
            return .reserved
        case (224...239, _, _, _):
            return .multicast
        case (240...255, _, _, _):
            return .reserved
        default:
            return .global
        }
    }

    private static let ec2Metadata: [UInt8] = [0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54]

    private static func classifyIPv6(_ b: [UInt8]) -> AddressClass {
        func zero(_ range: Range<Int>) -> Bool { b[range].allSatisfy { $0 == 0 } }
        func embedded(at index: Int) -> AddressClass {
            classifyIPv4(b[index], b[index + 1], b[index + 2], b[index + 3])
        }

        if zero(0..<12) {
            if zero(12..<16) { return .unspecified }
            if zero(12..<15) && b[15] == 1 { return .loopback }
            return embedded(at: 12)  // IPv4-compatible, deprecated but still routed by some stacks
        }
        if zero(0..<10) && b[10] == 0xff && b[11] == 0xff { return embedded(at: 12) }  // IPv4-mapped
        if zero(0..<8) && b[8] == 0xff && b[9] == 0xff && zero(10..<12) { return embedded(at: 12) }  // translated
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b {
            if zero(4..<12) { return embedded(at: 12) }  // NAT64 well-known prefix
            if b[4] == 0x00 && b[5] == 0x01 { return .privateUse }  // 64:ff9b:1::/48, local-use NAT64
        }
        if b[0] == 0x20 && b[1] == 0x02 { return embedded(at: 2) }  // 6to4
        if b == ec2Metadata { return .metadata }
        if b[0] == 0xff { return .multicast }
        if b[0] & 0xfe == 0xfc { return .privateUse }
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return .linkLocal }
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return .privateUse }  // site-local, deprecated
        if b[0] == 0x20 && b[1] == 0x01 {
            if b[2] == 0x0d && b[3] == 0xb8 { return .documentation }
            if b[2] == 0x00 && b[3] == 0x02 && b[4] == 0x00 && b[5] == 0x00 { return .benchmarking }
            if b[2] <= 0x01 { return .reserved }  // 2001::/23, IETF protocol assignments (Teredo is 2001::/32)
        }
        if b[0] == 0x3f && b[1] == 0xff && b[2] & 0xf0 == 0 { return .documentation }
        // Everything else outside global unicast (2000::/3): 100::/64 (discard-only) and unassigned space.
        if b[0] & 0xe0 != 0x20 { return .reserved }
        return .global
    }
}
