import Foundation
import HTTPServer

/// `/healthz` (the process is up), `/readyz` (it can claim: database reachable, not draining) and
/// `/metrics` (Prometheus text) on HERALD_WORKER_METRICS_PORT.
public final class WorkerHealthServer: Sendable {
    private let server: HTTPServer

    public var port: UInt16 { server.port }

    public init(worker: DeliveryWorker, host: String = "0.0.0.0", port: UInt16) throws {
        let configuration = HTTPServerConfiguration(
            host: host, port: port, threadCount: 1, dispatch: .inline, maxBodyBytes: 1024, connectionLimit: 64)
        server = try HTTPServer(
            configuration: configuration,
            tooLarge: { HTTPResponse(status: 413) },
            handler: { request in Self.answer(request, worker: worker) })
    }

    public func stop() { server.stop() }

    static func answer(_ request: HTTPRequest, worker: DeliveryWorker) -> HTTPResponse {
        guard request.method == "GET" else { return HTTPResponse(status: 405) }
        switch request.path {
        case "/healthz":
            return json(200, #"{"status":"ok"}"#)
        case "/readyz":
            return worker.isReady ? json(200, #"{"status":"ready"}"#) : json(503, #"{"status":"not_ready"}"#)
        case "/metrics":
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                                body: Array(worker.metrics.render().utf8))
        default:
            return json(404, #"{"error":{"code":"not_found","message":"No such resource.","field":null}}"#)
        }
    }

    private static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
}
