import Foundation
import Postgres

/// What a worker says about itself every few seconds (sql/035_console.sql).
public struct WorkerHeartbeat: Sendable, Equatable {
    public var workerID: String
    public var host: String
    public var version: String
    public var startedAt: Date
    public var inFlight: Int
    /// Upstreams paused by a setup fault (`apns`, `fcm`), sorted.
    public var pausedUpstreams: [String]
    public var claimsPerSecond: Double
    public var intervalSeconds: Double

    public init(workerID: String, host: String, version: String, startedAt: Date, inFlight: Int,
                pausedUpstreams: [String], claimsPerSecond: Double, intervalSeconds: Double) {
        self.workerID = workerID
        self.host = host
        self.version = version
        self.startedAt = startedAt
        self.inFlight = inFlight
        self.pausedUpstreams = pausedUpstreams
        self.claimsPerSecond = claimsPerSecond
        self.intervalSeconds = intervalSeconds
    }
}

/// A worker's row as read back: its last beat, when it was seen, and whether it is lost.
public struct WorkerStatus: Sendable, Equatable {
    public let heartbeat: WorkerHeartbeat
    public let lastSeenAt: Date
    public let secondsSinceSeen: Double
    /// Not seen for `WorkerHeartbeatStore.lostAfterBeats` of its own intervals.
    public let lost: Bool
}

/// The workers' heartbeats: each worker upserts its row (`beat`); the console and `heraldctl workers` read them
/// (`list`); the intake's janitor deletes rows not seen for a day (`MaintenanceStore`).
public struct WorkerHeartbeatStore: Sendable {
    /// A worker missing this many of its beats is reported lost.
    public static let lostAfterBeats = 3.0

    public init() {}

    public func beat(_ heartbeat: WorkerHeartbeat, on connection: PostgresConnection) throws {
        try connection.query(Self.beatSQL, [
            heartbeat.workerID, heartbeat.host, heartbeat.version, heartbeat.startedAt, heartbeat.inFlight,
            heartbeat.pausedUpstreams, heartbeat.claimsPerSecond, heartbeat.intervalSeconds,
        ])
    }

    /// Every worker seen in the last day, live ones first, then by id.
    public func list(on connection: PostgresConnection) throws -> [WorkerStatus] {
        try connection.query(Self.listSQL, [Self.lostAfterBeats]).rows.map { row in
            let paused = try row.string(5)
            return WorkerStatus(
                heartbeat: WorkerHeartbeat(
                    workerID: try row.string(0), host: try row.string(1), version: try row.string(2),
                    startedAt: try row.date(3), inFlight: try row.int(4),
                    pausedUpstreams: paused.isEmpty ? [] : paused.split(separator: ",").map(String.init),
                    claimsPerSecond: try row.double(6), intervalSeconds: try row.double(7)),
                lastSeenAt: try row.date(8), secondsSinceSeen: max(0, try row.double(9)), lost: try row.bool(10))
        }
    }

    public func list(pool: PostgresPool) throws -> [WorkerStatus] {
        try pool.withConnection { try list(on: $0) }
    }

    static let beatSQL = """
        INSERT INTO worker_heartbeats (worker_id, host, version, started_at, last_seen_at, in_flight, paused_upstreams,
                                       claims_per_second, interval_seconds)
        VALUES ($1, $2, $3, $4, now(), $5, $6::text[], $7, $8)
        ON CONFLICT (worker_id) DO UPDATE
           SET host = EXCLUDED.host, version = EXCLUDED.version, started_at = EXCLUDED.started_at,
               last_seen_at = EXCLUDED.last_seen_at, in_flight = EXCLUDED.in_flight,
               paused_upstreams = EXCLUDED.paused_upstreams, claims_per_second = EXCLUDED.claims_per_second,
               interval_seconds = EXCLUDED.interval_seconds
        """

    /// $1 how many missed beats make a worker lost. A small table (one row per worker of the last day).
    public static let listSQL = """
        SELECT worker_id, host, version, started_at, in_flight, array_to_string(paused_upstreams, ','),
               claims_per_second, interval_seconds, last_seen_at,
               extract(epoch FROM now() - last_seen_at)::float8,
               last_seen_at < now() - make_interval(secs => interval_seconds * $1)
          FROM worker_heartbeats
         ORDER BY 11, worker_id
        """
}
