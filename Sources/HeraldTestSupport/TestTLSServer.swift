import HTTP2

/// A handler made of a closure.
public struct ClosureHandler: HTTP2ServerHandler {
    let body: @Sendable (HTTP2ServerRequest, HTTP2ServerResponder) -> Void

    public init(_ body: @escaping @Sendable (HTTP2ServerRequest, HTTP2ServerResponder) -> Void) {
        self.body = body
    }

    public func handle(_ request: HTTP2ServerRequest, responder: HTTP2ServerResponder) {
        body(request, responder)
    }
}

/// The project's HTTP/2 server over TLS with the test credentials' certificate (for 127.0.0.1 and
/// localhost, signed by the test CA), started on a free port: what an outbound fetch reaches in the tests
/// (libcurl negotiates h2 with it through ALPN).
public enum TestTLSServer {
    public static func start(handler: any HTTP2ServerHandler) throws -> HTTP2Server {
        let credentials = TestCredentials.shared
        let server = try HTTP2Server(
            configuration: HTTP2ServerConfiguration(
                host: "127.0.0.1", port: 0, tlsCertificateFile: credentials.serverCertificateFile,
                tlsKeyFile: credentials.serverKeyFile),
            handler: handler)
        try server.start()
        return server
    }
}
