import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Testing

@Suite("Redirects")
struct RedirectTests {
    /// `/redirect` -> `/final`; `/loop` -> itself; `/to-http` -> an http:// URL; `/to-metadata` -> the metadata
    /// service; `/final` answers 200 "final". Every path is logged.
    private func startRedirectServer(_ log: RequestLog) throws -> HTTP2Server {
        try startServer(
            handler: ClosureHandler { request, responder in
                log.record(request.path)
                let location: String? =
                    switch request.path {
                    case "/redirect": "/final"
                    case "/loop": "/loop"
                    case "/to-http": "http://\(request.authority ?? "127.0.0.1")/final"
                    case "/to-metadata": "https://169.254.169.254/latest/meta-data/"
                    default: nil
                    }
                if let location {
                    responder.respond(HTTP2Response(status: 302, headers: [HTTP2Header("location", location)]))
                } else {
                    responder.respond(HTTP2Response(status: 200, body: Array("final".utf8)))
                }
            })
    }

    @Test("By default a 3xx is the response: not followed")
    func notFollowedByDefault() async throws {
        let log = RequestLog()
        let server = try startRedirectServer(log)
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let response = try await send(fetcher, HTTPFetchRequest(url: url(server, "/redirect"))).get()
        #expect(response.status == 302)
        #expect(response.header("location") == "/final")
        #expect(log.all == ["/redirect"])
    }

    @Test("Followed when asked: the final response, with its own headers only")
    func followedWhenAsked() async throws {
        let log = RequestLog()
        let server = try startRedirectServer(log)
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let response = try await send(
            fetcher,
            HTTPFetchRequest(
                url: url(server, "/redirect"), followRedirects: 3)
        ).get()
        #expect(response.status == 200)
        #expect(response.body == Array("final".utf8))
        #expect(response.header("location") == nil)
        #expect(log.all == ["/redirect", "/final"])
    }

    @Test("More redirects than allowed: too_many_redirects")
    func tooMany() async throws {
        let log = RequestLog()
        let server = try startRedirectServer(log)
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let result = await send(fetcher, HTTPFetchRequest(url: url(server, "/loop"), followRedirects: 2))
        #expect(failure(result)?.code == .tooManyRedirects)
        #expect(log.all == ["/loop", "/loop", "/loop"])
    }

    @Test("Each hop is checked: a redirect to http:// or to the metadata service is refused")
    func hopsChecked() async throws {
        let log = RequestLog()
        let server = try startRedirectServer(log)
        defer { server.stop() }
        // Loopback allowed (the server is there), so only the hop's own check can refuse it.
        let fetcher = try makeFetcher(allowPrivate: true)
        defer { fetcher.stop() }

        let toHTTP = await send(fetcher, HTTPFetchRequest(url: url(server, "/to-http"), followRedirects: 3))
        #expect(failure(toHTTP)?.code == .schemeNotAllowed)

        let toMetadata = await send(
            fetcher,
            HTTPFetchRequest(
                url: url(server, "/to-metadata"), timeout: .seconds(30), followRedirects: 3))
        #expect(failure(toMetadata)?.code == .addressRefused)
        #expect(log.all == ["/to-http", "/to-metadata"])
    }
}
