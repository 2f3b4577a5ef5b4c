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

    public init(lane: String, due: Int, oldestDueSeconds: Double) {
        self.lane = lane
        self.due = due
        self.oldestDueSeconds = oldestDueSeconds
    }
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
        let rows = try connection.query(Self.dueByLaneSQL, [Self.countLimit]).rows
        var byNumber: [Int: (Int, Double)] = [:]
        for row in rows { byNumber[try row.int(0)] = (try row.int(1), max(try row.double(2), 0)) }
        return Self.lanes.map { lane in
            let (due, age) = byNumber[lane.number] ?? (0, 0)
            return LaneGauge(lane: lane.name, due: due, oldestDueSeconds: age)
        }
    }

    /// $1 the count limit per lane. The count is a range of the partial index per lane (its first
    /// column) with `available_at` checked in the index; the oldest due row comes from the queue heads
    /// (herald_queue_heads: one index probe per partner), since the index orders `available_at`
    /// within a partner, not within a lane.
    public static let dueByLaneSQL = """
        WITH heads AS MATERIALIZED (
            SELECT lane, min(oldest_available_at) AS oldest FROM herald_queue_heads()
             WHERE oldest_available_at <= now() GROUP BY lane)
        SELECT l.lane::int8,
               (SELECT coalesce(sum(due.member_count), 0) FROM (
                    SELECT d.member_count FROM deliveries d
                     WHERE d.state = 'pending' AND d.lane = l.lane AND d.available_at <= now()
                     LIMIT $1) due)::int8,
               coalesce(extract(epoch FROM now() - h.oldest), 0)::float8
          FROM (VALUES (0::smallint), (1::smallint)) l(lane) LEFT JOIN heads h ON h.lane = l.lane
         ORDER BY l.lane
        """
}
