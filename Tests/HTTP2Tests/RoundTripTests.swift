import Foundation
import HTTP2
import HeraldTestSupport
import Testing

@Suite("Round trips")
struct RoundTripTests {
    @Test("TLS: status, headers and body echo", arguments: [true, false])
    func roundTrip(tls: Bool) async throws {
        let server = try startServer(tls: tls)
        defer { server.stop() }
        let client = try makeClient(for: server, tls: tls)
        defer { client.shutdown() }

        let body = Array((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let response = try await client.send(
            HTTP2Request(
                method: "POST", path: "/3/device/abc?x=1",
                headers: [HTTP2Header("x-test", "hello"), HTTP2Header("apns-topic", "app.demo")], body: body))
        #expect(response.status == 200)
        #expect(response.body == body)
        #expect(response.header("x-method") == "POST")
        #expect(response.header("x-path") == "/3/device/abc?x=1")
        #expect(response.header("x-authority") == "127.0.0.1:\(server.port)")
        #expect(response.header("x-scheme") == (tls ? "https" : "http"))
        #expect(response.header("x-test-echo") == "hello")
        // Pseudo-headers are not among the regular headers; content-length was added for the body.
        #expect(response.header("x-header-names") == "x-test,apns-topic,content-length")

        let empty = try await client.send(HTTP2Request(method: "GET", path: "/empty"))
        #expect(empty.status == 200)
        #expect(empty.body.isEmpty)
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test("Header blocks of changing sizes on one connection arrive exactly (each side reuses its header storage)")
    func headerBlocksOfChangingSizes() async throws {
        // The answer carries every request header back, so the server's blocks change size with the client's.
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                var headers = request.headers.enumerated().map { index, header in
                    HTTP2Header("x-echo-\(index)", header.name + "=" + header.value)
                }
                headers.append(HTTP2Header("x-path", request.path))
                responder.respond(HTTP2Response(status: 200, headers: headers))
            })
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        // Larger than the first storage (2 KB), then small again, then larger still; content-lengths of 1 to 5 digits.
        for (round, size) in [0, 1, 9, 10, 3000, 5, 10_000, 12_345, 2].enumerated() {
            let value = String((0..<size).map { Character(UnicodeScalar(UInt8(0x61 + ($0 + round) % 26))) })
            let path = "/r/\(round)/" + String(repeating: "p", count: size % 700)
            let response = try await client.send(
                HTTP2Request(
                    method: "POST", path: path,
                    headers: [HTTP2Header("X-Mixed-Case", value), HTTP2Header("x-round", "\(round)")],
                    body: [UInt8](repeating: 7, count: size)))
            #expect(response.status == 200)
            #expect(response.header("x-path") == path)
            #expect(response.header("x-echo-0") == "x-mixed-case=" + value)
            #expect(response.header("x-echo-1") == "x-round=\(round)")
            #expect(response.header("x-echo-2") == (size > 0 ? "content-length=\(size)" : nil))
            #expect(response.header("x-echo-3") == nil)
        }
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test("Repeated, changed and moved headers on one connection arrive exactly (the server reuses repeating ones)")
    func repeatingRequestHeaders() async throws {
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                let lines = request.headers.map {
                    $0.name + "=" + $0.value + ($0.neverIndexed ? " (never indexed)" : "")
                }
                responder.respond(HTTP2Response(status: 200, body: Array(lines.joined(separator: "\n").utf8)))
            })
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        // Not `authorization`: nghttp2 always sends that one never indexed, whatever the flag says.
        let long = "app." + String(repeating: "j", count: 180)
        let rounds: [[HTTP2Header]] = [
            [HTTP2Header("apns-topic", long), HTTP2Header("apns-collapse-id", "v1")],
            [HTTP2Header("apns-topic", long), HTTP2Header("apns-collapse-id", "v2")],
            [HTTP2Header("x-apns-topic", long), HTTP2Header("apns-collapse-id", "v2", neverIndexed: true)],
            [HTTP2Header("apns-topic", String(long.dropLast()) + "k")],
            [HTTP2Header("apns-topic", ""), HTTP2Header("apns-collapse-id", "v2"), HTTP2Header("x-new", "n")],
            [HTTP2Header("apns-topic", long), HTTP2Header("apns-collapse-id", "v2"), HTTP2Header("x-new", "n")],
        ]
        for headers in rounds {
            let response = try await client.send(HTTP2Request(method: "GET", path: "/", headers: headers))
            let expected = headers.map { $0.name + "=" + $0.value + ($0.neverIndexed ? " (never indexed)" : "") }
            #expect(String(decoding: response.body, as: UTF8.self) == expected.joined(separator: "\n"))
        }
        #expect(client.statistics.connectionsOpened == 1)
    }

    @Test("Never-indexed headers arrive marked as such, both ways; other headers do not")
    func neverIndexedHeaders() async throws {
        // The answer lists what the server saw as never indexed, and sends one header each way itself.
        let server = try startServer(
            handler: ClosureHandler { request, responder in
                let marked = request.headers.filter(\.neverIndexed).map(\.name).joined(separator: ",")
                responder.respond(
                    HTTP2Response(
                        status: 200,
                        headers: [
                            HTTP2Header("x-marked", marked), HTTP2Header("x-unique", "u1", neverIndexed: true),
                        ]))
            })
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        for round in 0..<3 {
            let response = try await client.send(
                HTTP2Request(
                    method: "POST", path: "/",
                    headers: [
                        HTTP2Header("x-id", "id-\(round)", neverIndexed: true), HTTP2Header("x-topic", "app.demo"),
                        HTTP2Header("x-other-id", "o-\(round)", neverIndexed: true),
                    ]))
            #expect(response.header("x-marked") == "x-id,x-other-id")
            #expect(response.headers.first { $0.name == "x-unique" }?.neverIndexed == true)
            #expect(response.headers.first { $0.name == "x-marked" }?.neverIndexed == false)
        }
        // The flag is how a field is sent, not what it is.
        #expect(HTTP2Header("a", "b", neverIndexed: true) == HTTP2Header("a", "b"))
    }

    @Test("responseHeaders keeps only the named response headers (any letter case asked); nil keeps all")
    func keptResponseHeaders() async throws {
        let server = try startServer(
            handler: ClosureHandler { _, responder in
                responder.respond(
                    HTTP2Response(
                        status: 503,
                        headers: [
                            HTTP2Header("apns-id", "0192f3a4-0000-7000-8000-000000000001"),
                            HTTP2Header("retry-after", "7"),
                            HTTP2Header("apns-unique-id", "u-1", neverIndexed: true), HTTP2Header("x-other", ""),
                        ], body: Array(#"{"reason":"ServiceUnavailable"}"#.utf8)))
            })
        defer { server.stop() }
        func client(keeping names: [String]?) throws -> HTTP2Client {
            try HTTP2Client(
                configuration: HTTP2ClientConfiguration(
                    url: "https://127.0.0.1:\(server.port)", caFile: TestCredentials.shared.caFile, connectionCount: 1,
                    responseHeaders: names))
        }
        let filtered = try client(keeping: ["Retry-After", "x-other"])
        defer { filtered.shutdown() }
        for _ in 0..<3 {
            let response = try await filtered.send(HTTP2Request(path: "/"))
            #expect(response.status == 503)
            #expect(response.headers == [HTTP2Header("retry-after", "7"), HTTP2Header("x-other", "")])
            #expect(response.body == Array(#"{"reason":"ServiceUnavailable"}"#.utf8))
        }
        let none = try client(keeping: [])
        defer { none.shutdown() }
        let bare = try await none.send(HTTP2Request(path: "/"))
        #expect(bare.status == 503 && bare.headers.isEmpty)
        let all = try client(keeping: nil)
        defer { all.shutdown() }
        #expect(
            try await all.send(HTTP2Request(path: "/")).headers.map(\.name)
                == ["apns-id", "retry-after", "apns-unique-id", "x-other"])
    }

    @Test("A large response body arrives whole")
    func largeResponse() async throws {
        let payload = Array((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        let server = try startServer(
            handler: ClosureHandler { _, responder in
                responder.respond(HTTP2Response(status: 200, body: payload))
            })
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        let response = try await client.send(HTTP2Request(method: "GET", path: "/big"))
        #expect(response.body == payload)
    }

    @Test("The server answers 413 for an oversized body without calling the handler")
    func oversizedBody() async throws {
        let calls = Counter()
        let server = try startServer(
            maxBodyBytes: 1000,
            handler: ClosureHandler { request, responder in
                calls.increment()
                responder.respond(echoResponse(request))
            })
        defer { server.stop() }
        let client = try makeClient(for: server)
        defer { client.shutdown() }
        let tooLarge = try await client.send(HTTP2Request(path: "/", body: [UInt8](repeating: 7, count: 2000)))
        #expect(tooLarge.status == 413)
        #expect(calls.current == 0)
        let fits = try await client.send(HTTP2Request(path: "/", body: [UInt8](repeating: 7, count: 1000)))
        #expect(fits.status == 200)
        #expect(calls.current == 1)
    }

    @Test("An untrusted certificate fails with tls_failed")
    func untrustedCertificate() async throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try makeClient(for: server, trustCA: false)
        defer { client.shutdown() }
        await #expect(throws: HTTP2Error.self) {
            _ = try await client.send(HTTP2Request(path: "/"))
        }
        do throws(HTTP2Error) {
            _ = try await client.send(HTTP2Request(path: "/"))
        } catch {
            #expect(error.code == .tlsFailed)
            #expect(error.message.contains("certificate"))
        }
    }

    @Test("The certificate is verified against the URL's host: a name it lists passes, an address it lacks fails")
    func hostVerification() async throws {
        let credentials = TestCredentials.shared
        let server = try HTTP2Server(
            configuration: HTTP2ServerConfiguration(
                host: "0.0.0.0", tlsCertificateFile: credentials.serverCertificateFile,
                tlsKeyFile: credentials.serverKeyFile),
            handler: echoHandler)
        try server.start()
        defer { server.stop() }

        // "localhost": resolved off the loop, SNI and host name verification.
        let named = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "https://localhost:\(server.port)", caFile: credentials.caFile))
        defer { named.shutdown() }
        let response = try await named.send(HTTP2Request(method: "GET", path: "/named"))
        #expect(response.status == 200)
        #expect(response.header("x-authority") == "localhost:\(server.port)")

        // 127.0.0.2 reaches the same server, but the certificate does not list it.
        let other = try HTTP2Client(
            configuration: HTTP2ClientConfiguration(
                url: "https://127.0.0.2:\(server.port)", caFile: credentials.caFile))
        defer { other.shutdown() }
        do throws(HTTP2Error) {
            _ = try await other.send(HTTP2Request(path: "/"))
            Issue.record("expected a TLS failure")
        } catch {
            #expect(error.code == .tlsFailed)
        }
    }

    @Test("Invalid configurations are rejected up front")
    func invalidConfiguration() throws {
        #expect(throws: HTTP2Error.self) {
            _ = try HTTP2Client(configuration: HTTP2ClientConfiguration(url: "ftp://example.com"))
        }
        #expect(throws: HTTP2Error.self) {
            _ = try HTTP2Client(
                configuration: HTTP2ClientConfiguration(url: "https://127.0.0.1:1", caFile: "/nonexistent"))
        }
        #expect(throws: HTTP2Error.self) {
            _ = try HTTP2Server(
                configuration: HTTP2ServerConfiguration(
                    tlsCertificateFile: "/nonexistent",
                    tlsKeyFile: "/nonexistent"),
                handler: echoHandler)
        }
    }
}
