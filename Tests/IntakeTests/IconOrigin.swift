import HTTP2
import HeraldTestSupport

/// Where an `iconUrl` points in the tests: HeraldTestSupport's TLS server (the test CA's certificate for
/// 127.0.0.1), answering 200 with a file's bytes, or 404.
final class IconOrigin: Sendable {
    private let server: HTTP2Server
    var port: Int { server.port }

    init(files: [String: [UInt8]]) throws {
        server = try TestTLSServer.start(
            handler: ClosureHandler { request, responder in
                if let body = files[request.path] {
                    responder.respond(HTTP2Response(status: 200, body: body))
                } else {
                    responder.respond(HTTP2Response(status: 404))
                }
            })
    }

    func stop() { server.stop() }
}
