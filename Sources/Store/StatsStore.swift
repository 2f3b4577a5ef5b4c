import Foundation
import Postgres

/// The queue at a glance (`heraldctl stats`).
public struct QueueStats: Sendable, Equatable {
    public struct Group: Sendable, Equatable {
        /// `pending` (due now), `scheduled` (pending, due later: a sendAt or a retry's backoff), `leased`.
        public let state: String
        public let lane: Int
        public let miniAppID: String
        public let count: Int
    }

    public let queue: [Group]
    /// How long the oldest due pending row has waited (0 when none is due).
    public let oldestDueSeconds: Double
    /// Deliveries finished in each window, by outcome: every outcome is present, zeros included.
    public let outcomes: [(window: String, counts: [(outcome: String, count: Int)])]

    public static func == (a: QueueStats, b: QueueStats) -> Bool {
        a.queue == b.queue && a.oldestDueSeconds == b.oldestDueSeconds
            && a.outcomes.map(\.window) == b.outcomes.map(\.window)
            && zip(a.outcomes, b.outcomes).allSatisfy { $0.counts.map(\.outcome) == $1.counts.map(\.outcome)
                && $0.counts.map(\.count) == $1.counts.map(\.count) }
    }
}

public struct StatsStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The outcomes a finished delivery can have (sql/009_live_activities.sql's check), in display order.
    public static let outcomes = ["sent", "failed", "dead", "token_invalid", "expired", "suppressed", "superseded", "cancelled"]
    public static let windows: [(name: String, seconds: Int)] = [("5m", 300), ("1h", 3_600)]

    /// Three statements in one round trip (each consistent in itself).
    public func stats() throws -> QueueStats {
        let results = try pool.withConnection { connection in
            try connection.pipeline([(Self.queueSQL, []), (Self.oldestDueSQL, []),
                                     (Self.outcomesSQL, [Self.windows[0].seconds, Self.windows[1].seconds])])
        }
        let queue = try results[0].rows.map {
            QueueStats.Group(state: try $0.string(0), lane: try $0.int(1), miniAppID: try $0.string(2), count: try $0.int(3))
        }
        let oldest = try results[1].first.map { try $0.double(0) } ?? 0
        var finished: [String: (recent: Int, hour: Int)] = [:]
        for row in results[2].rows {
            finished[try row.string(0)] = (try row.int(1), try row.int(2))
        }
        let outcomes = Self.windows.enumerated().map { index, window in
            (window.name, Self.outcomes.map { outcome in
                (outcome, index == 0 ? finished[outcome]?.recent ?? 0 : finished[outcome]?.hour ?? 0)
            })
        }
        return QueueStats(queue: queue, oldestDueSeconds: oldest, outcomes: outcomes)
    }
}

extension StatsStore {
    /// Every outbox row, grouped, counting deliveries (a group row its members not yet done). The outbox
    /// holds only unfinished work (finished rows move to history),
    /// so this stays a scan of a small table.
    public static let queueSQL = """
        SELECT CASE WHEN d.state = 'pending' AND d.available_at > now() THEN 'scheduled' ELSE d.state END AS state,
               d.lane, p.mini_app_id, sum(herald_delivery_weight(d.member_count, d.members_done))::int8
          FROM deliveries d JOIN partners p ON p.id = d.partner_id
         GROUP BY 1, 2, 3
         ORDER BY 1, 2, 3
        """

    /// The head of every (lane, partner) queue (sql/functions/queue_heads.sql's loose index scan, one probe per
    /// queue, as the worker's oldest-due gauge reads it); a head not due yet means nothing is due there.
    public static let oldestDueSQL = """
        SELECT coalesce(extract(epoch FROM now() - min(oldest_available_at)), 0)::float8
          FROM herald_queue_heads() WHERE oldest_available_at <= now()
        """

    /// $1 the short window, $2 the long one, in seconds: deliveries finished within each, by outcome (a sent
    /// group row counts its members, sql/016_delivery_groups.sql). The BRIN index
    /// on finished_at (sql/010_operations.sql) keeps the scan to the long window's block ranges.
    public static let outcomesSQL = """
        SELECT outcome,
               coalesce(sum(coalesce(cardinality(members), 1))
                            FILTER (WHERE finished_at > now() - make_interval(secs => $1)), 0)::int8,
               sum(coalesce(cardinality(members), 1))::int8
          FROM delivery_history
         WHERE finished_at > now() - make_interval(secs => $2)
         GROUP BY outcome
        """
}
