import Foundation
import HTTPServer
import HeraldCore
import Postgres

/// `/healthz` (the process is up), `/readyz` (it can deliver: database reachable, not draining, no
/// upstream paused; a 503 names what is wrong) and `/metrics` (Prometheus text) on
/// HERALD_WORKER_METRICS_PORT.
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
            return json(200, #"{"status":"ok","version":"\#(HeraldVersion.current)"}"#)
        case "/readyz":
            return readiness(worker)
        case "/metrics":
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                body: Array(worker.metrics.render(pipes: worker.pipes).utf8))
        default:
            return json(404, #"{"error":{"code":"not_found","message":"No such resource.","field":null}}"#)
        }
    }

    /// `{"status","database","draining","pausedUpstreams":{"apns":"InvalidProviderToken"}}`.
    static func readiness(_ worker: DeliveryWorker) -> HTTPResponse {
        let ready = worker.isReady
        let paused = worker.pausedUpstreams.sorted { $0.key < $1.key }
        var members: [(key: String, value: JSONValue)] = [
            ("status", .string(ready ? "ready" : "not_ready")),
            ("database", .string(worker.isDatabaseReachable ? "ok" : "unreachable")),
            ("draining", .bool(worker.isDraining)),
            ("pausedUpstreams", .object(paused.map { ($0.key, JSONValue.string($0.value)) })),
        ]
        if worker.poolerDetected { members.append(("pooler", .string(PostgresConnection.poolerReadiness))) }
        let body = JSONValue.object(members)
        return HTTPResponse(
            status: ready ? 200 : 503, headers: [("Content-Type", "application/json")],
            body: JSONWriter.bytes(body))
    }

    private static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
}
