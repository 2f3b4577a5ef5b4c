import Foundation
import HTTPFetch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The bytes of a textual IPv4 or IPv6 address (inet_pton), for readable tables.
private func bytes(_ text: String) -> [UInt8] {
    var v4 = in_addr()
    if inet_pton(AF_INET, text, &v4) == 1 {
        return withUnsafeBytes(of: &v4) { Array($0) }
    }
    var v6 = in6_addr()
    if inet_pton(AF_INET6, text, &v6) == 1 {
        return withUnsafeBytes(of: &v6) { Array($0) }
    }
    fatalError("not an address: \(text)")
}

@Suite("Address classification")
struct AddressPolicyTests {
    static let ipv4: [(String, AddressClass)] = [
        ("8.8.8.8", .global), ("1.1.1.1", .global), ("93.184.216.34", .global), ("223.255.255.255", .global),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("10.0.0.1", .privateUse), ("10.255.255.255", .privateUse),
        ("172.16.0.1", .privateUse), ("172.31.255.255", .privateUse),
        ("172.15.255.255", .global), ("172.32.0.0", .global),
        ("192.168.0.1", .privateUse), ("192.169.0.1", .global),
        ("169.254.0.1", .linkLocal), ("169.254.255.255", .linkLocal),
        ("169.254.169.254", .metadata), ("100.100.100.200", .metadata),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("100.63.255.255", .global), ("100.128.0.0", .global),
        ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.255", .reserved),
        ("192.0.0.8", .reserved), ("192.88.99.1", .reserved),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("198.17.255.255", .global), ("198.20.0.0", .global),
        ("192.0.2.1", .documentation), ("198.51.100.7", .documentation), ("203.0.113.9", .documentation),
    ]

    static let ipv6: [(String, AddressClass)] = [
        ("2606:4700:4700::1111", .global), ("2001:4860:4860::8888", .global), ("2a00:1450::1", .global),
        ("::", .unspecified), ("::1", .loopback),
        ("fc00::1", .privateUse), ("fd12:3456::1", .privateUse), ("fec0::1", .privateUse),
        ("64:ff9b:1::1", .privateUse),
        ("fd00:ec2::254", .metadata), ("fd00:ec2::253", .privateUse),
        ("fe80::1", .linkLocal), ("febf:ffff::1", .linkLocal),
        ("ff02::1", .multicast), ("ff0e::1", .multicast),
        ("2001:db8::1", .documentation), ("3fff::1", .documentation), ("2001:2::1", .benchmarking),
        ("2001::1", .reserved), ("2001:1ff::1", .reserved), ("100::1", .reserved), ("4000::1", .reserved),
        ("::2:0:0:1", .reserved),
    ]

    /// IPv6 forms embedding an IPv4 address are judged by it.
    static let embedded: [(String, AddressClass)] = [
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateUse), ("::ffff:169.254.169.254", .metadata),
        ("::ffff:0.0.0.0", .unspecified), ("::ffff:100.64.0.1", .sharedAddressSpace), ("::ffff:8.8.8.8", .global),
        ("::127.0.0.1", .loopback), ("::10.0.0.1", .privateUse), ("::8.8.8.8", .global),
        ("::ffff:0:127.0.0.1", .loopback), ("::ffff:0:8.8.8.8", .global),
        ("64:ff9b::127.0.0.1", .loopback), ("64:ff9b::a9fe:a9fe", .metadata), ("64:ff9b::192.168.1.1", .privateUse),
        ("64:ff9b::8.8.8.8", .global),
        ("2002:7f00:1::", .loopback), ("2002:c0a8:101::1", .privateUse), ("2002:808:808::1", .global),
    ]

    @Test("IPv4 ranges", arguments: ipv4)
    func classifiesIPv4(_ address: String, _ expected: AddressClass) {
        #expect(AddressPolicy.classify(bytes(address)) == expected, "\(address)")
    }

    @Test("IPv6 ranges", arguments: ipv6)
    func classifiesIPv6(_ address: String, _ expected: AddressClass) {
        #expect(AddressPolicy.classify(bytes(address)) == expected, "\(address)")
    }

    @Test("IPv4-mapped, -translated, -compatible, NAT64 and 6to4 forms", arguments: embedded)
    func classifiesEmbeddedIPv4(_ address: String, _ expected: AddressClass) {
        #expect(AddressPolicy.classify(bytes(address)) == expected, "\(address)")
    }

    @Test("Anything but 4 or 16 bytes is invalid")
    func invalidLengths() {
        for length in [0, 1, 3, 5, 15, 17] {
            #expect(AddressPolicy.classify([UInt8](repeating: 8, count: length)) == .invalid)
        }
    }

    @Test("By default only global addresses are allowed")
    func defaultPolicy() {
        let policy = AddressPolicy()
        for (address, expected) in Self.ipv4 + Self.ipv6 + Self.embedded {
            #expect(policy.allows(bytes(address)) == (expected == .global), "\(address)")
        }
        #expect(!policy.allows([8, 8, 8]))
    }

    @Test("allowPrivateAddresses opens everything but metadata services")
    func permissivePolicy() {
        let policy = AddressPolicy(allowPrivateAddresses: true)
        for (address, expected) in Self.ipv4 + Self.ipv6 + Self.embedded {
            #expect(policy.allows(bytes(address)) == (expected != .metadata), "\(address)")
        }
        #expect(!policy.allows([127, 0, 0]))
    }
}
