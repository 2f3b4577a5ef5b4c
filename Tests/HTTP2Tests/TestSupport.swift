import Foundation
import HTTP2
import HeraldTestSupport
import Synchronization

/// Answers 200 with the request body and what the server saw of the request in headers.
let echoHandler = ClosureHandler { request, responder in
    responder.respond(echoResponse(request))
}

func echoResponse(_ request: HTTP2ServerRequest) -> HTTP2Response {
    var headers = [
        HTTP2Header("x-method", request.method),
        HTTP2Header("x-path", request.path),
        HTTP2Header("x-authority", request.authority ?? ""),
        HTTP2Header("x-scheme", request.scheme),
        HTTP2Header("x-header-names", request.headers.map(\.name).joined(separator: ",")),
    ]
    if let value = request.header("x-test") {
        headers.append(HTTP2Header("x-test-echo", value))
    }
    return HTTP2Response(status: 200, headers: headers, body: request.body)
}

/// A started loopback server; TLS with the test credentials unless `tls` is false.
func startServer(
    tls: Bool = true, port: Int = 0, maxConcurrentStreams: Int = 1000, maxBodyBytes: Int = 1 << 20,
    loopCount: Int = 1, handler: any HTTP2ServerHandler = echoHandler
) throws -> HTTP2Server {
    let credentials = TestCredentials.shared
    var configuration = HTTP2ServerConfiguration(
        host: "127.0.0.1", port: port,
        tlsCertificateFile: tls ? credentials.serverCertificateFile : nil,
        tlsKeyFile: tls ? credentials.serverKeyFile : nil,
        maxConcurrentStreams: maxConcurrentStreams, maxBodyBytes: maxBodyBytes)
    configuration.loopCount = loopCount
    let server = try HTTP2Server(configuration: configuration, handler: handler)
    try server.start()
    return server
}

/// A client for `server`, trusting the test CA.
func makeClient(
    for server: HTTP2Server, tls: Bool = true, trustCA: Bool = true, connectionCount: Int = 1,
    maxConcurrentStreams: Int = 1000, streamsUntilAuthenticated: Int? = nil,
    requestTimeout: Duration = .seconds(5), pingInterval: Duration = .seconds(60),
    connectTimeout: Duration = .seconds(10)
) throws -> HTTP2Client {
    let url = tls ? "https://127.0.0.1:\(server.port)" : "http://127.0.0.1:\(server.port)"
    return try HTTP2Client(
        configuration: HTTP2ClientConfiguration(
            url: url, caFile: trustCA ? TestCredentials.shared.caFile : nil, connectionCount: connectionCount,
            maxConcurrentStreams: maxConcurrentStreams, streamsUntilAuthenticated: streamsUntilAuthenticated,
            connectTimeout: connectTimeout, requestTimeout: requestTimeout, pingInterval: pingInterval))
}

/// Sends every request at once and returns the results in order.
func sendAll(_ client: HTTP2Client, _ requests: [HTTP2Request]) async -> [Result<HTTP2Response, HTTP2Error>] {
    await withTaskGroup(of: (Int, Result<HTTP2Response, HTTP2Error>).self) { group in
        for (index, request) in requests.enumerated() {
            group.addTask {
                do throws(HTTP2Error) {
                    return (index, .success(try await client.send(request)))
                } catch {
                    return (index, .failure(error))
                }
            }
        }
        var results = [Result<HTTP2Response, HTTP2Error>?](repeating: nil, count: requests.count)
        for await (index, result) in group {
            results[index] = result
        }
        return results.map { $0! }
    }
}

/// The error of a failed result, nil on success.
func failure(_ result: Result<HTTP2Response, HTTP2Error>) -> HTTP2Error? {
    if case .failure(let error) = result {
        return error
    }
    return nil
}

/// Current and highest number of something in progress.
final class ConcurrencyGauge: Sendable {
    private let state = Mutex<(current: Int, maximum: Int)>((0, 0))

    @discardableResult
    func enter() -> Int {
        state.withLock { state in
            state.current += 1
            state.maximum = max(state.maximum, state.current)
            return state.current
        }
    }

    func leave() {
        state.withLock { $0.current -= 1 }
    }

    var current: Int { state.withLock { $0.current } }
    var maximum: Int { state.withLock { $0.maximum } }
}

/// Responders kept for answering later (or never).
final class ResponderStore: Sendable {
    private let responders = Mutex<[HTTP2ServerResponder]>([])

    func keep(_ responder: HTTP2ServerResponder) {
        responders.withLock { $0.append(responder) }
    }

    var count: Int { responders.withLock { $0.count } }

    func takeAll() -> [HTTP2ServerResponder] {
        responders.withLock { list in
            defer { list = [] }
            return list
        }
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    @discardableResult
    func increment() -> Int {
        value.add(1, ordering: .relaxed).newValue
    }

    var current: Int { value.load(ordering: .relaxed) }
}
