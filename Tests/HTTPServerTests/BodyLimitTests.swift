import Testing

@testable import HTTPServer

@Suite("Bodies over maxBodyBytes")
struct BodyLimitTests {
    @Test(
        "Content-Length over the limit: tooLarge at once, body never read, connection closed",
        arguments: dispatchModes)
    func contentLengthTooLarge(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let calls = Counter()
        let server = try startServer(dispatch, maxBodyBytes: 65_536) { _ in
            calls.increment()
            return HTTPResponse(status: 200)
        }
        defer { server.stop() }

        // Only the headers are sent: the answer must come without the server waiting for 10 MB.
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /v1/notifications HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.text == #"{"error":"body_too_large"}"#)
        #expect(client.isClosedByPeer())

        // One byte over is refused too, and with Expect: 100-continue no "100 Continue" is sent first.
        let expecting = try RawHTTPClient(port: server.port)
        try expecting.send(
            "POST /x HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 65537\r\n\r\n"
        )
        #expect(try expecting.readResponse().status == 413)
        #expect(calls.value == 0)
        #expect(try RawHTTPClient(port: server.port).request("POST", "/ok", body: [1]).status == 200)
    }

    @Test(
        "Chunked upload over the limit: read and dropped, then tooLarge; the handler never runs",
        arguments: dispatchModes)
    func chunkedTooLarge(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let calls = Counter()
        let server = try startServer(dispatch, maxBodyBytes: 65_536) { request in
            calls.increment()
            return HTTPResponse(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let pieces = (0..<25).map { patternBytes(4_096, seed: UInt64($0)) }  // 100 KiB
        try client.send("POST /v1/notifications HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send(chunkedBody(pieces))
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.text == #"{"error":"body_too_large"}"#)
        #expect(calls.value == 0)
    }

    @Test("Chunked upload within the limit reaches the handler whole", arguments: dispatchModes)
    func chunkedWithinLimit(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let server = try startServer(dispatch, maxBodyBytes: 65_536) { request in
            HTTPResponse(status: 200, body: request.body)
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        let pieces = [patternBytes(100, seed: 1), patternBytes(30_000, seed: 2), patternBytes(35_436, seed: 3)]
        try client.send("POST /c HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send(chunkedBody(pieces))
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body == pieces.flatMap { $0 })

        // The connection is still usable afterwards.
        #expect(try client.request("GET", "/after").status == 200)
    }

    @Test("A chunked upload that never ends is cut off instead of being read forever", arguments: dispatchModes)
    func endlessChunkedUpload(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let calls = Counter()
        let server = try startServer(dispatch, maxBodyBytes: 1_024) { _ in
            calls.increment()
            return HTTPResponse(status: 200)
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("POST /flood HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        let piece = patternBytes(16_384)
        let chunk = Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10]
        var sent = 0
        var cutOff = false
        while sent < 64 << 20 {
            do {
                try client.send(chunk)
                sent += piece.count
            } catch {
                cutOff = true
                break
            }
        }
        #expect(cutOff || client.isClosedByPeer())
        #expect(sent < 64 << 20)
        #expect(calls.value == 0)
    }
    @Test(
        "largerBodyLimit: asked only for bodies that may pass the limit, with the head (method, path, headers)",
        arguments: dispatchModes)
    func largerBodyLimit(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let asked = Counter()
        var configuration = testConfiguration(dispatch: dispatch, maxBodyBytes: 1_000)
        configuration.largerBodyLimit = { head in
            asked.increment()
            return head.method == "PUT" && head.path == "/big" && head.header("X-Allow") == "yes" ? 5_000 : nil
        }
        let server = try HTTPServer(configuration: configuration, tooLarge: tooLargeResponse) { request in
            HTTPResponse(status: 200, body: Array("\(request.body.count)".utf8))
        }
        defer { server.stop() }
        func put(_ path: String, _ count: Int, allow: Bool) throws -> RawHTTPClient.Response {
            try RawHTTPClient(port: server.port).request(
                "PUT", path, headers: allow ? [("X-Allow", "yes")] : [], body: [UInt8](repeating: 7, count: count))
        }
        #expect(try put("/big", 500, allow: false).status == 200)
        #expect(asked.value == 0, "a body within the limit does not ask")
        let granted = try put("/big", 5_000, allow: true)
        #expect(granted.status == 200 && granted.text == "5000")
        #expect(try put("/big", 5_001, allow: true).status == 413)
        #expect(try put("/big", 2_000, allow: false).status == 413)
        #expect(try put("/other", 2_000, allow: true).status == 413)
        #expect(asked.value == 4)
        // Chunked: the larger limit holds for the body as it arrives.
        let client = try RawHTTPClient(port: server.port)
        try client.send("PUT /big HTTP/1.1\r\nHost: localhost\r\nX-Allow: yes\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send(chunkedBody([patternBytes(3_000, seed: 1)]))
        let chunked = try client.readResponse()
        #expect(chunked.status == 200 && chunked.text == "3000")
    }
}
