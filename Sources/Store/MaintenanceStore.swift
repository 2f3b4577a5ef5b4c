import Foundation
import Postgres

/// Housekeeping every intake runs now and then, and `heraldctl partitions` runs on demand.
public struct MaintenanceStore: Sendable {
    public let pool: PostgresPool
    public init(pool: PostgresPool) { self.pool = pool }

    /// The partitioned tables and the retention each defaults to.
    public static let partitionedTables = ["push_requests", "delivery_history", "live_activity_events"]

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
                for name in names.map(\.name) {
                    // DDL naming tables: not a statement that takes parameters. The names are the partitioned
                    // tables' and the partitions Postgres listed.
                    try connection.execute("ALTER TABLE \(table) DETACH PARTITION \(name) CONCURRENTLY")
                    try connection.execute("DROP TABLE \(name)")
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
                .map { ($0.table, $0.partition, $0.bounds) }
        }
    }

    /// Deletes, in batches of `batchSize` rows (short statements, short locks) until none is left or `maxBatches`
    /// batches ran: rate buckets that left their windows, idempotency keys older than 25 hours, Live Activities and
    /// broadcast channels finished a week ago (with their targets and audit rows), webhook events, reminders, console
    /// sessions and sign-in failures, worker heartbeats and admin audit entries past their retention (each
    /// statement's in Queries/maintenance.sql). Returns the rows deleted.
    @discardableResult
    public func cleanExpired(batchSize: Int = 5_000, maxBatches: Int = 100) throws -> Int {
        try pool.withConnection { connection in
            var total = 0
            for statement in Self.deletions {
                for _ in 0..<maxBatches {
                    let deleted = try connection.run(statement.init(batchSize: batchSize))
                    total += deleted
                    if deleted < batchSize { break }
                }
            }
            return total
        }
    }

    /// The janitor's deletions, in the order they run.
    static var deletions: [any BatchDeletion.Type] {
        [
            DeleteExpiredRateBuckets.self, DeleteExpiredIdempotencyKeys.self, DeleteFinishedActivities.self,
            DeleteFinishedChannels.self, DeleteFinishedWebhookEvents.self, DeleteFinishedReminders.self,
            DeleteOldConsoleSessions.self, DeleteOldSignInFailures.self, DeleteOldWorkerHeartbeats.self,
            DeleteOldAdminAudit.self,
        ]
    }
}

/// The statements of the partitions and the janitor (Queries/maintenance.sql).
extension MaintenanceStore {

    struct Partition: QueryRow {
        let name: String

        init(row: PostgresRow) throws {
            name = try row.string("partition_name")
        }
    }

    struct PartitionBounds: QueryRow {
        let table: String
        let partition: String
        let bounds: String

        init(row: PostgresRow) throws {
            table = try row.string("table_name")
            partition = try row.string("partition_name")
            bounds = try row.string("bounds")
        }
    }

    /// A janitor's deletion of at most `batchSize` rows.
    protocol BatchDeletion: NamedQuery {
        var batchSize: Int { get }
        init(batchSize: Int)
    }

    struct DeleteExpiredRateBuckets: BatchDeletion {
        static let sql = Queries.Maintenance.deleteExpiredRateBuckets
        let batchSize: Int
    }

    struct DeleteExpiredIdempotencyKeys: BatchDeletion {
        static let sql = Queries.Maintenance.deleteExpiredIdempotencyKeys
        let batchSize: Int
    }

    struct DeleteFinishedActivities: BatchDeletion {
        static let sql = Queries.Maintenance.deleteFinishedActivities
        let batchSize: Int
    }

    struct DeleteFinishedChannels: BatchDeletion {
        static let sql = Queries.Maintenance.deleteFinishedChannels
        let batchSize: Int
    }

    struct DeleteFinishedWebhookEvents: BatchDeletion {
        static let sql = Queries.Maintenance.deleteFinishedWebhookEvents
        let batchSize: Int
    }

    struct DeleteFinishedReminders: BatchDeletion {
        static let sql = Queries.Maintenance.deleteFinishedReminders
        let batchSize: Int
    }

    struct DeleteOldConsoleSessions: BatchDeletion {
        static let sql = Queries.Maintenance.deleteOldConsoleSessions
        let batchSize: Int
    }

    struct DeleteOldSignInFailures: BatchDeletion {
        static let sql = Queries.Maintenance.deleteOldSignInFailures
        let batchSize: Int
    }

    struct DeleteOldWorkerHeartbeats: BatchDeletion {
        static let sql = Queries.Maintenance.deleteOldWorkerHeartbeats
        let batchSize: Int
    }

    struct DeleteOldAdminAudit: BatchDeletion {
        static let sql = Queries.Maintenance.deleteOldAdminAudit
        let batchSize: Int
    }
}

extension MaintenanceStore.BatchDeletion {
    var bindings: [(any PostgresEncodable)?] { [batchSize] }
}
