import HTTPServer
import HeraldCore
import Postgres
import Store

/// `GET /healthz` (the process answers) and `GET /readyz` (it reaches the database), for load balancers and
/// orchestrators; no credential.
struct ProbeHandler: Sendable {
    let pool: PostgresPool

    static let routes: [IntakeRoute] = [
        .open("GET", "/healthz", isLiveness: true) { handlers, _ in handlers.probe.live() },
        .open("GET", "/readyz") { handlers, _ in try handlers.probe.ready() },
    ]

    func live() -> HTTPResponse {
        Reply.json(200, .object([("status", .string("ok")), ("version", .string(HeraldVersion.current))]))
    }

    /// 503 `database_unavailable` when no pooled connection answers. Ready behind a connection pooler too (its
    /// statements run unnamed), with `pooler` naming the setting that says so.
    func ready() throws -> HTTPResponse {
        do {
            try ReadinessProbe(pool: pool).check()
        } catch {
            throw HeraldError.databaseUnavailable
        }
        var members: [(key: String, value: JSONValue)] = [("status", .string("ready"))]
        if pool.poolerDetected { members.append(("pooler", .string(PostgresConnection.poolerReadiness))) }
        return Reply.json(200, .object(members))
    }
}
