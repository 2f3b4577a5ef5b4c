import Foundation
import HTTP2
import Testing

/// The server's answer to each ALPN offer: "h2" offered, no ALPN at all (HTTP/2 with prior knowledge,
/// as APNs gives aioapns and pushy), and ALPN without "h2" (a no_application_protocol alert, RFC 7301 3.2).
@Suite("ALPN on the server")
struct ALPNTests {
    @Test("a client that sends no ALPN extension gets HTTP/2 with prior knowledge")
    func noALPNGetsPriorKnowledgeHTTP2() throws {
        let server = try startServer()
        defer { server.stop() }
        let outcome = try ALPNProbe.run(port: server.port, protocols: nil, path: "/prior-knowledge")
        #expect(outcome.handshakeError == nil)
        #expect(outcome.negotiated == nil)
        #expect(outcome.status == 200)
    }

    @Test(
        "a client offering h2 among others gets h2", arguments: [["h2"], ["http/1.1", "h2"], ["spdy/3", "h2", "h3"]])
    func offeredH2IsSelected(_ protocols: [String]) throws {
        let server = try startServer()
        defer { server.stop() }
        let outcome = try ALPNProbe.run(port: server.port, protocols: protocols)
        #expect(outcome.negotiated == "h2")
        #expect(outcome.status == 200)
    }

    @Test(
        "a client offering ALPN without h2 is refused in the handshake",
        arguments: [["http/1.1"], ["http/1.0", "http/1.1"], ["h2c"]])
    func alpnWithoutH2IsRefused(_ protocols: [String]) throws {
        let server = try startServer()
        defer { server.stop() }
        let outcome = try ALPNProbe.run(port: server.port, protocols: protocols)
        #expect(outcome.status == nil)
        let error = try #require(outcome.handshakeError)
        #expect(error.contains("no application protocol"), "\(error)")
        // The refused handshake leaves the server serving others.
        #expect(try ALPNProbe.run(port: server.port, protocols: ["h2"]).status == 200)
    }

    @Test("our own client still negotiates h2 and a cleartext server still speaks h2c")
    func ownClientUnchanged() async throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        #expect(try await client.send(HTTP2Request(method: "GET", path: "/x")).status == 200)

        let cleartext = try startServer(tls: false)
        defer { cleartext.stop() }
        let h2c = try makeClient(for: cleartext, tls: false)
        defer { h2c.shutdown() }
        #expect(try await h2c.send(HTTP2Request(method: "GET", path: "/y")).status == 200)
    }
}
