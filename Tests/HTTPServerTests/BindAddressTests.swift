import Testing

@testable import HTTPServer

@Suite("Listening addresses")
struct BindAddressTests {
    @Test("IPv4 literals carry the port in network order")
    func ipv4() throws {
        let address = try BindAddress(host: "127.0.0.1", port: 8080)
        guard case .ipv4(let raw) = address else {
            Issue.record("expected IPv4")
            return
        }
        #expect(UInt16(bigEndian: raw.sin_port) == 8080)
        #expect(UInt32(bigEndian: raw.sin_addr.s_addr) == 0x7F00_0001)
        #expect(!address.isIPv6)
    }

    @Test("IPv6 literals, bracketed or not", arguments: ["::1", "[::1]", "::"])
    func ipv6(host: String) throws {
        let address = try BindAddress(host: host, port: 443)
        #expect(address.isIPv6)
    }

    @Test("Names are refused: the server binds numeric addresses only", arguments: ["localhost", "", "1.2.3"])
    func names(host: String) {
        let error = #expect(throws: HTTPServerError.self) { try BindAddress(host: host, port: 80) }
        #expect(error?.code == "invalid_configuration")
    }
}
