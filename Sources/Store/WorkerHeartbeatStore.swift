import Foundation
import Postgres

/// What a worker says about itself every few seconds (sql/035_console.sql).
public struct WorkerHeartbeat: Sendable, Equatable {
    public var workerID: String
    public var host: String
    /// The operator's label of the build (HERALD_VERSION: an image tag, a commit).
    public var version: String
    /// The release the worker runs (`HeraldVersion.current`); nil in the row of a worker of a release before
    /// sql/064_worker_release.sql, which does not write it.
    public var release: String?
    public var startedAt: Date
    public var inFlight: Int
    /// Upstreams paused by a setup fault (`apns`, `fcm`), sorted.
    public var pausedUpstreams: [String]
    public var claimsPerSecond: Double
    public var intervalSeconds: Double

    public init(
        workerID: String, host: String, version: String, release: String?, startedAt: Date, inFlight: Int,
        pausedUpstreams: [String], claimsPerSecond: Double, intervalSeconds: Double
    ) {
        self.workerID = workerID
        self.host = host
        self.version = version
        self.release = release
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
        try connection.run(Beat(heartbeat: heartbeat))
    }

    /// Every worker seen in the last day, live ones first, then by id.
    public func list(on connection: PostgresConnection) throws -> [WorkerStatus] {
        try connection.rows(Queries.WorkerHeartbeats.List(lostAfterBeats: Self.lostAfterBeats))
    }

    public func list(pool: PostgresPool) throws -> [WorkerStatus] {
        try pool.withConnection { try list(on: $0) }
    }
}

extension WorkerHeartbeatStore {
    struct Beat: NamedQuery {
        static let sql = Queries.WorkerHeartbeats.beat
        let heartbeat: WorkerHeartbeat
        var bindings: [(any PostgresEncodable)?] {
            [
                heartbeat.workerID, heartbeat.host, heartbeat.version, heartbeat.startedAt, heartbeat.inFlight,
                heartbeat.pausedUpstreams, heartbeat.claimsPerSecond, heartbeat.intervalSeconds, heartbeat.release,
            ]
        }
    }

}

extension WorkerStatus: QueryRow {
    public init(row: PostgresRow) throws {
        let paused = try row.string("paused_upstreams")
        self.init(
            heartbeat: WorkerHeartbeat(
                workerID: try row.string("worker_id"), host: try row.string("host"), version: try row.string("version"),
                release: try row.optionalString("release"), startedAt: try row.date("started_at"),
                inFlight: try row.int("in_flight"),
                pausedUpstreams: paused.isEmpty ? [] : paused.split(separator: ",").map(String.init),
                claimsPerSecond: try row.double("claims_per_second"),
                intervalSeconds: try row.double("interval_seconds")),
            lastSeenAt: try row.date("last_seen_at"), secondsSinceSeen: max(0, try row.double("seconds_since_seen")),
            lost: try row.bool("lost"))
    }
}
