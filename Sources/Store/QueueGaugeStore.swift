import Foundation
import Postgres

/// One lane's due queue: what an autoscaler scales the workers on.
public struct LaneGauge: Sendable, Equatable {
    /// `realtime` (lane 0, partner traffic) or `bulk` (lane 1, operator backfills and replays).
    public let lane: String
    /// Pending deliveries of the lane with `available_at <= now()` (a group row counts its members, the
    /// index's `member_count`), counted over at most `QueueGaugeStore.countLimit` rows.
    public let due: Int
    /// Age of the lane's oldest due row in seconds (0 when nothing is due).
    public let oldestDueSeconds: Double
}

/// The worker's autoscaling gauges (`herald_queue_due_deliveries{lane}` and
/// `herald_queue_oldest_due_seconds{lane}`): one statement per refresh, on the due partial index
/// `deliveries_due_partner` (sql/006_worker.sql; it replaced 004's `deliveries_due`; `member_count` is its
/// last key column since sql/017_claim_one_scan.sql).
public struct QueueGaugeStore: Sendable {
    /// Lane numbers (sql/004_outbox.sql) and the label each gets.
    public static let lanes: [(number: Int, name: String)] = [(0, "realtime"), (1, "bulk")]
    /// Counting stops here per lane: the count walks index entries, and past this many due rows an
    /// autoscaler is at its maximum anyway (the oldest-due age still grows and says how far behind).
    public static let countLimit = 100_000

    public init() {}

    /// Both lanes, realtime first; a lane with nothing due reads 0 and 0.
    public func gauges(on connection: PostgresConnection) throws -> [LaneGauge] {
        var byNumber: [Int: (Int, Double)] = [:]
        for row in try connection.rows(Queries.QueueGauges.DueByLane(countLimit: Self.countLimit)) {
            byNumber[row.lane] = (row.due, max(row.oldestDueSeconds, 0))
        }
        return Self.lanes.map { lane in
            let (due, age) = byNumber[lane.number] ?? (0, 0)
            return LaneGauge(lane: lane.name, due: due, oldestDueSeconds: age)
        }
    }
}

extension QueueGaugeStore {

    struct LaneDue: QueryRow, Decodable {
        let lane: Int
        let due: Int
        let oldestDueSeconds: Double
    }
}
