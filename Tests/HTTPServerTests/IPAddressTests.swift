import HTTPServer
import Testing

/// `IPAddress` and `IPNetwork` as plain values: the server's one parser of address text.
@Suite struct IPAddressTests {
    @Test("numeric IPv4 and IPv6 parse (brackets and spaces allowed); names, ports and zones do not")
    func parsing() {
        #expect(IPAddress("192.0.2.1")?.bytes == [192, 0, 2, 1])
        #expect(IPAddress(" [2001:db8::1] ")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:192.0.2.1")?.bytes.count == 16)
        #expect(IPAddress("::ffff:192.0.2.1")?.unmapped == IPAddress("192.0.2.1"))
        for bad in ["", "localhost", "192.0.2.1:80", "fe80::1%eth0", "192.0.2", "1.2.3.256"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }

    @Test("a block holds the addresses under its prefix, and an IPv4 block their IPv4-mapped forms")
    func networks() throws {
        let block = try #require(IPNetwork("10.1.2.3/8"))
        #expect(block.description == "10.0.0.0/8")
        #expect(block.contains(IPAddress("10.255.0.1")!) && !block.contains(IPAddress("11.0.0.1")!))
        #expect(block.contains(IPAddress("::ffff:10.0.0.9")!))
        #expect(!block.contains(IPAddress("2001:db8::1")!))
        let odd = try #require(IPNetwork("192.0.2.128/25"))
        #expect(odd.contains(IPAddress("192.0.2.200")!) && !odd.contains(IPAddress("192.0.2.127")!))
        #expect(IPNetwork("192.0.2.7")?.description == "192.0.2.7/32")
        #expect(IPNetwork("2001:db8::/32")?.contains(IPAddress("2001:db8:ffff::1")!) == true)
        #expect(IPNetwork("::ffff:10.0.0.0/104")?.description == "10.0.0.0/8")
        #expect(IPNetwork("0.0.0.0/0")?.contains(IPAddress("203.0.113.1")!) == true)
        for bad in ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/+8", "::1/129", "::ffff:10.0.0.0/64", "x/8"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }
}
