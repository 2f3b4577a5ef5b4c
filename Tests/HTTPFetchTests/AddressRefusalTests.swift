import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Testing

@Suite("Refused before or at connect")
struct AddressRefusalTests {
    @Test("127.0.0.1 and localhost are refused without the allow flag (address_refused), allowed with it")
    func loopback() async throws {
        let log = RequestLog()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                log.record(request.path)
                responder.respond(HTTP2Response(status: 200))
            })
        defer { server.stop() }

        let strict = try makeFetcher(allowPrivate: false)
        defer { strict.stop() }
        let byAddress = await send(strict, HTTPFetchRequest(url: url(server, "/by-address")))
        #expect(failure(byAddress)?.code == .addressRefused)
        // A name is judged by the address it resolves to.
        let byName = await send(strict, HTTPFetchRequest(url: "https://localhost:\(server.port)/by-name"))
        #expect(failure(byName)?.code == .addressRefused)
        // The IPv4-mapped IPv6 form of loopback is loopback.
        let mapped = await send(strict, HTTPFetchRequest(url: "https://[::ffff:127.0.0.1]:\(server.port)/mapped"))
        #expect(failure(mapped)?.code == .addressRefused)
        #expect(log.all.isEmpty)

        let permissive = try makeFetcher(allowPrivate: true)
        defer { permissive.stop() }
        let allowed = await send(permissive, HTTPFetchRequest(url: url(server, "/allowed")))
        #expect(response(allowed)?.status == 200)
        #expect(log.all == ["/allowed"])
    }

    @Test("Metadata services are refused at once, even with the allow flag: no connection is attempted")
    func metadata() async throws {
        for allowPrivate in [false, true] {
            let fetcher = try makeFetcher(allowPrivate: allowPrivate)
            defer { fetcher.stop() }
            for target in ["https://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/latest/meta-data/"] {
                // A connect attempt to an unreachable address would end in connect_failed or timeout: only the
                // open-socket check answers address_refused. (No timing asserted: under the full suite the
                // test's own continuation may wait long for a thread.)
                let result = await send(
                    fetcher,
                    HTTPFetchRequest(
                        url: target, timeout: .seconds(30), connectTimeout: .seconds(20)))
                #expect(failure(result)?.code == .addressRefused, "\(target)")
            }
        }
    }

    @Test("Only https: other schemes are refused before anything is sent")
    func schemes() async throws {
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }
        for target in [
            "http://127.0.0.1:1/x", "HTTP://example.com/", "ftp://example.com/file", "file:///etc/passwd",
            "gopher://example.com/",
        ] {
            let result = await send(fetcher, HTTPFetchRequest(url: target))
            #expect(failure(result)?.code == .schemeNotAllowed, "\(target)")
        }
    }

    @Test("Malformed URLs and requests are refused with invalid_url and invalid_request; nothing leaks into messages")
    func invalid() async throws {
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }
        for target in ["", "not a url", "https://", "//example.com/x", "https://exa mple.com/"] {
            let result = await send(fetcher, HTTPFetchRequest(url: target))
            #expect(failure(result)?.code == .invalidURL, "\(target)")
        }

        let secret = "sha256=0123456789abcdef"
        let injected = await send(
            fetcher,
            HTTPFetchRequest(
                url: "https://example.com/", headers: [HTTPFetchHeader("X-Signature", secret + "\r\nX-Evil: 1")]))
        #expect(failure(injected)?.code == .invalidRequest)
        #expect(!(failure(injected)?.description.contains(secret) ?? true))
        let badName = await send(
            fetcher,
            HTTPFetchRequest(
                url: "https://example.com/", headers: [HTTPFetchHeader("a b", "c")]))
        #expect(failure(badName)?.code == .invalidRequest)
        let getWithBody = await send(fetcher, HTTPFetchRequest(url: "https://example.com/", body: [1]))
        #expect(failure(getWithBody)?.code == .invalidRequest)
        let negative = await send(fetcher, HTTPFetchRequest(url: "https://example.com/", maxResponseBytes: -1))
        #expect(failure(negative)?.code == .invalidRequest)
    }
}
