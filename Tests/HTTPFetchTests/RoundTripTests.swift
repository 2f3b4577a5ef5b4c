import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Testing

@Suite("Round trips over HTTPS")
struct RoundTripTests {
    @Test("GET: path, query, headers and user agent reach the server; headers and body come back (blocking fetch)")
    func get() throws {
        let server = try startServer()
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let response = try fetcher.fetch(
            HTTPFetchRequest(
                url: url(server, "/icons/a.png?size=64"), headers: [HTTPFetchHeader("X-Test", "hello")]))
        #expect(response.status == 200)
        #expect(!response.truncated)
        #expect(response.body.isEmpty)
        #expect(response.header("x-method") == "GET")
        #expect(response.header("x-path") == "/icons/a.png?size=64")
        #expect(response.header("x-echo-x-test") == "hello")
        #expect(response.header("x-echo-user-agent") == "Herald/1")
        // No Expect header, no proxy headers: only what was asked for, plus libcurl's accept.
        #expect(response.header("x-header-names") == "user-agent,accept,x-test")
    }

    @Test("POST: the body and content type arrive byte for byte and are echoed back")
    func post() async throws {
        let server = try startServer()
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let body = Array((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let result = await send(
            fetcher,
            HTTPFetchRequest(
                method: .post, url: url(server, "/hooks/delivery"),
                headers: [HTTPFetchHeader("Content-Type", "application/json"), HTTPFetchHeader("X-Test", "signed")],
                body: body))
        let response = try result.get()
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("x-method") == "POST")
        #expect(response.header("x-path") == "/hooks/delivery")
        #expect(response.header("x-echo-content-type") == "application/json")
        #expect(response.header("x-echo-x-test") == "signed")

        let empty = try await send(
            fetcher,
            HTTPFetchRequest(
                method: .post, url: url(server, "/empty"), headers: [HTTPFetchHeader("Content-Type", "text/plain")])
        ).get()
        #expect(empty.status == 200)
        #expect(empty.body.isEmpty)
        #expect(empty.header("x-method") == "POST")

        // Without a Content-Type from the caller none is sent (libcurl would otherwise claim a form).
        let untyped = try await send(
            fetcher,
            HTTPFetchRequest(
                method: .post, url: url(server, "/raw"), body: [1, 2])
        ).get()
        #expect(untyped.body == [1, 2])
        #expect(untyped.header("x-echo-content-type") == nil)
    }

    @Test("The test CA is trusted only when configured: without it the certificate fails (tls_failed)")
    func extraCA() async throws {
        let log = RequestLog()
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                log.record(request.path)
                responder.respond(.init(status: 204))
            })
        defer { server.stop() }

        let untrusting = try makeFetcher(trustTestCA: false)
        defer { untrusting.stop() }
        let refused = await send(untrusting, HTTPFetchRequest(url: url(server, "/untrusted")))
        #expect(failure(refused)?.code == .tlsFailed)

        let trusting = try makeFetcher(trustTestCA: true)
        defer { trusting.stop() }
        let accepted = await send(trusting, HTTPFetchRequest(url: url(server, "/trusted")))
        #expect(response(accepted)?.status == 204)
        #expect(log.all == ["/trusted"])
    }
}
