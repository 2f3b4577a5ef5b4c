import Foundation
import Postgres

/// The queue at a glance (`heraldctl stats`).
public struct QueueStats: Sendable, Equatable {
    public struct Group: Sendable, Equatable, Decodable {
        /// `pending` (due now), `scheduled` (pending, due later: a sendAt or a retry's backoff), `leased`.
        public let state: String
        public let lane: Int
        public let miniAppID: String
        /// Deliveries, a group row's members not yet done counted one by one (the query's `deliveries`).
        public let count: Int

        enum CodingKeys: String, CodingKey {
            case state, lane, miniAppID
            case count = "deliveries"
        }
    }

    public let queue: [Group]
    /// How long the oldest due pending row has waited (0 when none is due).
    public let oldestDueSeconds: Double
    /// Deliveries finished in each window, by outcome: every outcome is present, zeros included.
    public let outcomes: [(window: String, counts: [(outcome: String, count: Int)])]

    public static func == (a: QueueStats, b: QueueStats) -> Bool {
        a.queue == b.queue && a.oldestDueSeconds == b.oldestDueSeconds
            && a.outcomes.map(\.window) == b.outcomes.map(\.window)
            && zip(a.outcomes, b.outcomes).allSatisfy {
                $0.counts.map(\.outcome) == $1.counts.map(\.outcome)
                    && $0.counts.map(\.count) == $1.counts.map(\.count)
            }
    }
}

public struct StatsStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The outcomes a finished delivery can have (sql/009_live_activities.sql's check), in display order.
    public static let outcomes = [
        "sent", "failed", "dead", "token_invalid", "expired", "suppressed", "superseded", "cancelled",
    ]
    public static let windows: [(name: String, seconds: Int)] = [("5m", 300), ("1h", 3_600)]

    /// Three statements in one round trip (each consistent in itself).
    public func stats() throws -> QueueStats {
        let results = try pool.withConnection { connection in
            try connection.pipeline(queries: [
                Queries.Stats.Queue(), Queries.Stats.OldestDue(),
                Queries.Stats.Outcomes(
                    shortSeconds: Self.windows[0].seconds,
                    longSeconds: Self.windows[1].seconds),
            ])
        }
        let queue = try Queries.Stats.Queue.Row.rows(of: results[0])
        let oldest = try Queries.Stats.OldestDue.Row.rows(of: results[1]).first?.oldestDueSeconds ?? 0
        var finished: [String: (recent: Int, hour: Int)] = [:]
        for row in try Queries.Stats.Outcomes.Row.rows(of: results[2]) {
            finished[row.outcome] = (row.shortWindow, row.longWindow)
        }
        let outcomes = Self.windows.enumerated().map { index, window in
            (
                window.name,
                Self.outcomes.map { outcome in
                    (outcome, index == 0 ? finished[outcome]?.recent ?? 0 : finished[outcome]?.hour ?? 0)
                }
            )
        }
        return QueueStats(queue: queue, oldestDueSeconds: oldest, outcomes: outcomes)
    }
}

/// The statements of `stats` (Queries/stats.sql).
extension StatsStore {

    struct OldestDueSeconds: QueryRow, Decodable {
        let oldestDueSeconds: Double
    }

    /// One outcome's deliveries finished within the short window and the long one.
    struct OutcomeCounts: QueryRow, Decodable {
        let outcome: String
        let shortWindow: Int
        let longWindow: Int
    }
}

extension QueueStats.Group: QueryRow {}
