import Foundation
import Testing

@testable import HTTPServer

@Suite("Requests and responses round trip")
struct RoundTripTests {
    @Test(
        "GET: method, path, query, headers reach the handler; status, headers, body come back",
        arguments: dispatchModes)
    func getWithQueryAndHeaders(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let recorder = RequestRecorder()
        let server = try startServer(dispatch) { request in
            recorder.record(request)
            return HTTPResponse(
                status: 202,
                headers: [(name: "Content-Type", value: "text/plain"), (name: "X-Request-Id", value: "abc-123")],
                body: Array("hello \(request.query["name"] ?? "?")".utf8)
            )
        }
        defer { server.stop() }

        let client = try RawHTTPClient(port: server.port)
        let response = try client.request(
            "GET",
            "/v1/partners/p1/devices?name=J%C3%BCrgen&limit=10&flag&limit=20",
            headers: [("X-Custom-Token", "s3cret"), ("Accept", "text/plain"), ("X-Multi", "a"), ("x-multi", "b")]
        )
        #expect(response.status == 202)
        #expect(response.headers["content-type"] == "text/plain")
        #expect(response.headers["x-request-id"] == "abc-123")
        #expect(response.text == "hello Jürgen")

        let request = try #require(recorder.all.first)
        #expect(request.method == "GET")
        #expect(request.path == "/v1/partners/p1/devices")
        #expect(request.query == ["name": "Jürgen", "limit": "10", "flag": ""])
        #expect(request.headers["x-custom-token"] == "s3cret")
        #expect(request.headers["host"] == "localhost")
        #expect(request.headers["x-multi"] == "a, b")
        #expect(request.header("X-CUSTOM-TOKEN") == "s3cret")
        #expect(request.header("Accept") == "text/plain")
        #expect(request.header("missing") == nil)
        #expect(request.body.isEmpty)
    }

    @Test("POST bodies arrive whole, small and near the limit, even when sent in pieces", arguments: dispatchModes)
    func postBodies(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let server = try startServer(dispatch) { request in
            HTTPResponse(status: 200, headers: [(name: "X-Method", value: request.method)], body: request.body)
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        let small = Array(#"{"recipient":"r-1","title":"Hi"}"#.utf8)
        let first = try client.request("POST", "/v1/notifications", body: small)
        #expect(first.status == 200)
        #expect(first.body == small)
        #expect(first.headers["x-method"] == "POST")

        let large = patternBytes(60_000)
        let second = try client.request("PUT", "/upload", body: large)
        #expect(second.status == 200)
        #expect(second.body == large)

        let exact = patternBytes(65_536, seed: 7)
        let third = try client.request("POST", "/exact", body: exact)
        #expect(third.status == 200)
        #expect(third.body == exact)

        // Headers, then the body in three writes with pauses: the handler still sees it once and whole.
        let pieces = [patternBytes(10, seed: 1), patternBytes(20_000, seed: 2), patternBytes(5, seed: 3)]
        try client.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 20015\r\n\r\n")
        for piece in pieces {
            usleep(20_000)  // a pause, so that each piece reaches the server in a read of its own
            try client.send(piece)
        }
        let fourth = try client.readResponse()
        #expect(fourth.status == 200)
        #expect(fourth.body == pieces.flatMap { $0 })
    }

    @Test("Keep-alive: several requests on one connection", arguments: dispatchModes)
    func keepAlive(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let server = try startServer(dispatch) { request in
            HTTPResponse(status: 200, body: Array(request.path.utf8))
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)
        for index in 0..<20 {
            let hasBody = !index.isMultiple(of: 2)
            let response = try client.request(hasBody ? "POST" : "GET", "/n/\(index)", body: hasBody ? [1, 2, 3] : nil)
            #expect(response.status == 200)
            #expect(response.text == "/n/\(index)")
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
    }

    @Test(
        "A response libmicrohttpd refuses becomes an empty 500; the handler's Content-Length is ignored",
        arguments: dispatchModes)
    func invalidResponses(dispatch: HTTPServerConfiguration.Dispatch) throws {
        let server = try startServer(dispatch) { request in
            switch request.path {
            case "/bad-status":
                return HTTPResponse(status: 42, body: Array("nope".utf8))
            case "/bad-header":
                return HTTPResponse(
                    status: 200, headers: [(name: "X-Evil", value: "a\r\nSet-Cookie: x=1")],
                    body: Array("nope".utf8))
            default:
                return HTTPResponse(
                    status: 200, headers: [(name: "content-length", value: "999")],
                    body: Array("fine".utf8))
            }
        }
        defer { server.stop() }
        let client = try RawHTTPClient(port: server.port)

        let badStatus = try client.request("GET", "/bad-status")
        #expect(badStatus.status == 500)
        #expect(badStatus.body.isEmpty)

        let badHeader = try client.request("GET", "/bad-header")
        #expect(badHeader.status == 500)
        #expect(badHeader.body.isEmpty)
        #expect(badHeader.headers["set-cookie"] == nil)

        let fine = try client.request("GET", "/fine")
        #expect(fine.status == 200)
        #expect(fine.headers["content-length"] == "4")
        #expect(fine.text == "fine")
    }
}
