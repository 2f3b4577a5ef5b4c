import HTTPServer
import HeraldCore

/// `/metrics` of the intake on its own port (`HERALD_INTAKE_METRICS_PORT`), apart from the API: the counters
/// name partners and routes, so they belong to the monitoring network, and a proxy that publishes the API port
/// cannot publish them by mistake. The API's port answers `/metrics` 404, like any unknown path.
final class IntakeMetricsServer: Sendable {
    static let path = "/metrics"

    private let server: HTTPServer

    /// The bound port (the configured one, or the one picked for 0).
    var port: UInt16 { server.port }

    /// `render` writes the Prometheus text at each scrape. Listens at once; throws when the port is taken.
    init(host: String, port: UInt16, render: @escaping @Sendable () -> String) throws {
        // One inline thread is plenty for a scraper; a few connections so a stuck one cannot lock it out.
        let configuration = HTTPServerConfiguration(
            host: host, port: port, threadCount: 1, dispatch: .inline, maxBodyBytes: 1_024, connectionLimit: 16,
            perAddressConnectionLimit: 0, connectionTimeoutSeconds: 15, requestReadTimeoutSeconds: 10)
        server = try HTTPServer(
            configuration: configuration,
            rejection: { Reply.error(HeraldError(status: $0.status, code: $0.code, message: $0.message)) },
            handler: { request in Self.answer(request, render: render) })
    }

    func stop() { server.stop() }

    static func answer(_ request: HTTPRequest, render: () -> String) -> HTTPResponse {
        guard request.path == Self.path else { return Reply.error(.notFound) }
        guard request.method == "GET" || request.method == "HEAD" else {
            var refused = Reply.error(.methodNotAllowed)
            refused.headers.append(("Allow", "GET, HEAD"))
            return refused
        }
        return HTTPResponse(
            status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
            body: Array(render().utf8))
    }
}
