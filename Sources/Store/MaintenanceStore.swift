import Foundation
import Postgres

/// Housekeeping every intake runs now and then, and `heraldctl partitions` runs on demand.
public struct MaintenanceStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The partitioned tables and the retention each defaults to.
    public static let partitionedTables = [
        "push_requests", "delivery_history", "live_activity_events", "delivery_events",
    ]

    /// Ensures monthly partitions from last month to `monthsAhead` months ahead.
    public func ensurePartitions(monthsAhead: Int) throws {
        try pool.withConnection { connection in
            for table in Self.partitionedTables {
                try connection.run(Queries.Maintenance.EnsurePartitions(table: table, months: monthsAhead + 2))
            }
        }
    }

    /// Drops partitions that ended more than `retentionDays` ago; returns their names. Each is
    /// first detached CONCURRENTLY (outside any transaction), so inserts into the parent never wait
    /// behind the ACCESS EXCLUSIVE lock a plain DROP of a partition takes on its parent.
    public func dropPartitions(retentionDays: Int) throws -> [String] {
        try pool.withConnection { connection in
            var dropped: [String] = []
            for table in Self.partitionedTables {
                let names = try connection.rows(
                    Queries.Maintenance.ExpiredPartitions(table: table, retentionDays: retentionDays))
                for name in names.map(\.partitionName) {
                    try connection.execute(
                        Queries.Maintenance.detachPartition.filling("table", identifier: table)
                            .filling("partition", identifier: name))
                    try connection.execute(
                        Queries.Maintenance.dropDetachedPartition.filling("partition", identifier: name))
                    dropped.append(name)
                }
            }
            return dropped
        }
    }

    /// The partitions that exist, with their bounds.
    public func listPartitions() throws -> [(table: String, partition: String, bounds: String)] {
        try pool.withConnection { connection in
            try connection.rows(Queries.Maintenance.ListPartitions(tables: Self.partitionedTables))
                .map { ($0.tableName, $0.partitionName, $0.bounds) }
        }
    }

    /// Deletes, in batches of `batchSize` rows (short statements, short locks) until none is left or `maxBatches`
    /// batches ran: rate buckets that left their windows, idempotency keys older than 25 hours, expired media, Live
    /// Activities and broadcast channels finished a week ago (with their targets and audit rows), webhook events,
    /// reminders, console sessions and sign-in failures, worker heartbeats and admin audit entries past their
    /// retention (each statement's in Queries/maintenance.sql). Returns the rows deleted.
    @discardableResult
    public func cleanExpired(batchSize: Int = 5_000, maxBatches: Int = 100) throws -> Int {
        try pool.withConnection { connection in
            var total = 0
            for deletion in Self.deletions {
                for _ in 0..<maxBatches {
                    let deleted = try connection.run(deletion(batchSize))
                    total += deleted
                    if deleted < batchSize { break }
                }
            }
            return total
        }
    }

    /// The janitor's deletions of at most `batchSize` rows each, in the order they run.
    static let deletions: [@Sendable (_ batchSize: Int) -> any NamedQuery] = [
        Queries.Maintenance.DeleteExpiredRateBuckets.init, Queries.Maintenance.DeleteExpiredIdempotencyKeys.init,
        Queries.Maintenance.DeleteExpiredMedia.init,
        Queries.Maintenance.DeleteFinishedActivities.init, Queries.Maintenance.DeleteFinishedChannels.init,
        Queries.Maintenance.DeleteFinishedWebhookEvents.init, Queries.Maintenance.DeleteFinishedReminders.init,
        Queries.Maintenance.DeleteOldConsoleSessions.init, Queries.Maintenance.DeleteOldSignInFailures.init,
        Queries.Maintenance.DeleteOldWorkerHeartbeats.init, Queries.Maintenance.DeleteOldAdminAudit.init,
    ]
}

/// The statements of the partitions and the janitor (Queries/maintenance.sql).
extension MaintenanceStore {

    struct Partition: QueryRow, Decodable {
        let partitionName: String
    }

    struct PartitionBounds: QueryRow, Decodable {
        let tableName: String
        let partitionName: String
        let bounds: String
    }
}
