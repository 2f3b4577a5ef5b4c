import HTTP2
import HeraldTestSupport

/// Where an `iconUrl` points in the tests: the project's HTTP/2 server over TLS with the test CA's
/// certificate for 127.0.0.1, answering 200 with a file's bytes, or 404.
final class IconOrigin: Sendable {
    private struct Files: HTTP2ServerHandler {
        let files: [String: [UInt8]]
        func handle(_ request: HTTP2ServerRequest, responder: HTTP2ServerResponder) {
            if let body = files[request.path] {
                responder.respond(HTTP2Response(status: 200, body: body))
            } else {
                responder.respond(HTTP2Response(status: 404))
            }
        }
    }

    private let server: HTTP2Server
    var port: Int { server.port }

    init(files: [String: [UInt8]]) throws {
        let credentials = TestCredentials.shared
        server = try HTTP2Server(
            configuration: HTTP2ServerConfiguration(
                host: "127.0.0.1", port: 0, tlsCertificateFile: credentials.serverCertificateFile,
                tlsKeyFile: credentials.serverKeyFile),
            handler: Files(files: files))
        try server.start()
    }

    func stop() { server.stop() }
}
