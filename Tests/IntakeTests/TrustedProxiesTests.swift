import HTTPServer
import Testing

@testable import Intake

/// The client address of a request (`TrustedProxies`) as plain values.
@Suite struct TrustedProxiesTests {
    static let proxies = TrustedProxies(networks: TrustedProxies.parse("10.0.0.0/8,2001:db8::/32")!)

    static func client(_ peer: String, _ forwardedFor: String?) -> String? {
        proxies.client(peer: IPAddress(peer), forwardedFor: forwardedFor)?.description
    }

    @Test("an untrusted peer is the client, whatever X-Forwarded-For says")
    func untrustedPeer() {
        #expect(Self.client("203.0.113.5", "192.0.2.1") == "203.0.113.5")
        #expect(
            TrustedProxies(networks: []).client(peer: IPAddress("10.0.0.1"), forwardedFor: "192.0.2.1")?
                .description == "10.0.0.1")
    }

    @Test("from a trusted proxy, the right-most untrusted entry; trusted hops skipped; garbage ends the walk")
    func trustedPeer() {
        #expect(Self.client("10.0.0.1", nil) == "10.0.0.1")
        #expect(Self.client("10.0.0.1", "192.0.2.1, 203.0.113.9") == "203.0.113.9")
        #expect(Self.client("10.0.0.1", "192.0.2.1, 203.0.113.9, 10.2.3.4") == "203.0.113.9")
        #expect(Self.client("::ffff:10.0.0.1", "[2001:db8::5], 2001:db8::6") == "2001:db8::5")
        #expect(Self.client("10.0.0.1", "10.9.9.9, 10.8.8.8") == "10.9.9.9")
        #expect(Self.client("10.0.0.1", "203.0.113.9, unknown, 10.2.3.4") == "10.2.3.4")
        #expect(Self.client("10.0.0.1", "") == "10.0.0.1")
        #expect(TrustedProxies.parse("10.0.0.0/8,") == nil && TrustedProxies.parse("") == nil)
    }
}
