import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Testing

@Suite("Timeouts and size limits")
struct LimitTests {
    /// Answers `/bytes/N` with N bytes (0, 1, 2, ... wrapping).
    static let sizedHandler = ClosureHandler { request, responder in
        let count = Int(request.path.split(separator: "/").last ?? "") ?? 0
        responder.respond(HTTP2Response(status: 200, body: (0..<count).map { UInt8(truncatingIfNeeded: $0) }))
    }

    @Test("A server that answers late: timeout, after about the request's timeout")
    func timeout() async throws {
        let held = ResponderStore()
        let server = try startServer(handler: ClosureHandler { _, responder in held.keep(responder) })
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let started = ContinuousClock.now
        let result = await send(fetcher, HTTPFetchRequest(url: url(server, "/slow"), timeout: .milliseconds(500)))
        let elapsed = ContinuousClock.now - started
        #expect(failure(result)?.code == .timeout)
        #expect(held.count == 1)
        #expect(elapsed >= .milliseconds(450))
    }

    @Test("Policy .fail: a body over the limit is too_large; one at the limit is whole")
    func sizeCapFails() async throws {
        let server = try startServer(handler: Self.sizedHandler)
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let over = await send(fetcher, HTTPFetchRequest(url: url(server, "/bytes/1001"), maxResponseBytes: 1000))
        #expect(failure(over)?.code == .tooLarge)
        let big = await send(fetcher, HTTPFetchRequest(url: url(server, "/bytes/300000"), maxResponseBytes: 1 << 16))
        #expect(failure(big)?.code == .tooLarge)

        let exact = try await send(
            fetcher,
            HTTPFetchRequest(
                url: url(server, "/bytes/1000"), maxResponseBytes: 1000)
        ).get()
        #expect(exact.body.count == 1000)
        #expect(!exact.truncated)
    }

    @Test("Policy .truncate: the first bytes are kept, the rest ignored, and the response says truncated")
    func sizeCapTruncates() async throws {
        let server = try startServer(handler: Self.sizedHandler)
        defer { server.stop() }
        let fetcher = try makeFetcher()
        defer { fetcher.stop() }

        let cut = try await send(
            fetcher,
            HTTPFetchRequest(
                url: url(server, "/bytes/300000"), maxResponseBytes: 4096, oversize: .truncate)
        ).get()
        #expect(cut.status == 200)
        #expect(cut.truncated)
        #expect(cut.body == (0..<4096).map { UInt8(truncatingIfNeeded: $0) })

        let small = try await send(
            fetcher,
            HTTPFetchRequest(
                url: url(server, "/bytes/100"), maxResponseBytes: 4096, oversize: .truncate)
        ).get()
        #expect(!small.truncated)
        #expect(small.body.count == 100)

        // The fetcher is still usable after a transfer it cut short.
        let after = try await send(fetcher, HTTPFetchRequest(url: url(server, "/bytes/10"))).get()
        #expect(after.body.count == 10)
    }
}
