import Foundation
import Postgres

/// Whether a pooled connection reaches the database (the intake's `GET /readyz`).
public struct ReadinessProbe: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// Throws when no pooled connection answers.
    public func check() throws {
        _ = try pool.withConnection { try $0.run(Queries.Probes.Ready()) }
    }
}
