import Foundation
import HTTP2
import HTTPFetch
import HeraldTestSupport
import Synchronization

/// Answers 200 with the request body, and what the server saw of the request in headers.
let echoHandler = ClosureHandler { request, responder in
    var headers = [
        HTTP2Header("x-method", request.method),
        HTTP2Header("x-path", request.path),
        HTTP2Header("x-header-names", request.headers.map(\.name).joined(separator: ",")),
    ]
    for name in ["user-agent", "content-type", "x-test"] {
        if let value = request.header(name) {
            headers.append(HTTP2Header("x-echo-\(name)", value))
        }
    }
    responder.respond(HTTP2Response(status: 200, headers: headers, body: request.body))
}

/// The receiving end of these tests (HeraldTestSupport's TLS server with the test CA's certificate).
func startServer(handler: any HTTP2ServerHandler = echoHandler) throws -> HTTP2Server {
    try TestTLSServer.start(handler: handler)
}

/// A fetcher that trusts the test CA and, unless told otherwise, may connect to loopback (where the server is).
func makeFetcher(allowPrivate: Bool = true, trustTestCA: Bool = true) throws -> HTTPFetcher {
    try HTTPFetcher(
        configuration: HTTPFetchConfiguration(
            allowPrivateAddresses: allowPrivate, extraCAFile: trustTestCA ? TestCredentials.shared.caFile : nil))
}

func url(_ server: HTTP2Server, _ path: String) -> String {
    "https://127.0.0.1:\(server.port)\(path)"
}

/// `start`, awaited (keeps blocking `fetch` calls off the cooperative pool in most tests).
func send(_ fetcher: HTTPFetcher, _ request: HTTPFetchRequest) async -> Result<HTTPFetchResponse, HTTPFetchError> {
    await withCheckedContinuation { continuation in
        fetcher.start(request) { continuation.resume(returning: $0) }
    }
}

/// The error of a failed result, nil on success.
func failure(_ result: Result<HTTPFetchResponse, HTTPFetchError>) -> HTTPFetchError? {
    if case .failure(let error) = result {
        return error
    }
    return nil
}

/// The response of a successful result, nil on failure.
func response(_ result: Result<HTTPFetchResponse, HTTPFetchError>) -> HTTPFetchResponse? {
    try? result.get()
}

/// What a server received, in order (request paths).
final class RequestLog: Sendable {
    private let paths = Mutex<[String]>([])

    func record(_ path: String) {
        paths.withLock { $0.append(path) }
    }

    var all: [String] { paths.withLock { $0 } }
}

/// Responders kept for answering later (or never).
final class ResponderStore: Sendable {
    private let responders = Mutex<[HTTP2ServerResponder]>([])

    func keep(_ responder: HTTP2ServerResponder) {
        responders.withLock { $0.append(responder) }
    }

    var count: Int { responders.withLock { $0.count } }
}

/// A value shared with completions.
final class Locked<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    func update(_ body: (inout Value) -> Void) {
        value.withLock { body(&$0) }
    }

    var current: Value { value.withLock { $0 } }
}
