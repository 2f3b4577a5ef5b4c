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
                try connection.query(
                    "SELECT herald_ensure_monthly_partitions($1, now() - interval '1 month', $2)",
                    [table, monthsAhead + 2])
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
                let names = try connection.query(
                    "SELECT herald_expired_monthly_partitions($1, now() - make_interval(days => $2))",
                    [table, retentionDays]).rows.map { try $0.string(0) }
                for name in names {
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
            try connection.query("""
                SELECT p.relname, c.relname, pg_get_expr(c.relpartbound, c.oid)
                  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
                 WHERE p.relname = ANY($1::text[]) ORDER BY 1, 2
                """, [Self.partitionedTables]).rows.map { (try $0.string(0), try $0.string(1), try $0.string(2)) }
        }
    }

    /// Deletes rate buckets that left their windows, idempotency keys older than 25 hours, Live
    /// Activities and broadcast channels that finished more than `finishedActivityRetention` ago (with their targets
    /// and audit rows) and
    /// reminders whose time passed more than `finishedReminderRetention` ago, admin audit entries past
    /// `adminAuditRetention`, in
    /// batches of `batchSize` rows (short statements, short locks), until none is left or
    /// `maxBatches` batches ran. Returns the rows deleted.
    @discardableResult
    public func cleanExpired(batchSize: Int = 5_000, maxBatches: Int = 100) throws -> Int {
        try pool.withConnection { connection in
            var total = 0
            for statement in [Self.deleteExpiredRateBuckets, Self.deleteExpiredIdempotencyKeys, Self.deleteFinishedActivities,
                              Self.deleteFinishedChannels, Self.deleteFinishedWebhookEvents, Self.deleteFinishedReminders,
                              Self.deleteOldConsoleSessions, Self.deleteOldSignInFailures,
                              Self.deleteOldWorkerHeartbeats, Self.deleteOldAdminAudit] {
                for _ in 0..<maxBatches {
                    let deleted = try connection.query(statement, [batchSize]).affectedRows
                    total += deleted
                    if deleted < batchSize { break }
                }
            }
            return total
        }
    }

    /// How long the admin audit trail is kept (sql/047_admin_audit.sql): over a year, for a yearly review.
    public static let adminAuditRetention = "400 days"

    /// Admin audit entries past `adminAuditRetention` (admin_audit_at).
    public static let deleteOldAdminAudit = """
        DELETE FROM admin_audit WHERE id = ANY (ARRAY(
            SELECT id FROM admin_audit WHERE at < now() - interval '\(adminAuditRetention)' LIMIT $1))
        """

    /// Console sessions a day after they expired or were signed out (kept that long for the audit trail).
    static let deleteOldConsoleSessions = """
        DELETE FROM console_sessions WHERE token_hash = ANY (ARRAY(
            SELECT token_hash FROM console_sessions
             WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
             LIMIT $1))
        """

    /// Failed console sign-ins of windows that ended long ago (a window is a minute; an hour leaves any window
    /// a setting could give room).
    static let deleteOldSignInFailures = """
        DELETE FROM console_sign_in_failures WHERE client = ANY (ARRAY(
            SELECT client FROM console_sign_in_failures WHERE window_start < now() - interval '1 hour' LIMIT $1))
        """

    /// Heartbeats of workers not seen for a day (stopped or replaced long ago).
    static let deleteOldWorkerHeartbeats = """
        DELETE FROM worker_heartbeats WHERE worker_id = ANY (ARRAY(
            SELECT worker_id FROM worker_heartbeats WHERE last_seen_at < now() - interval '1 day' LIMIT $1))
        """

    static let deleteExpiredRateBuckets = """
        DELETE FROM rate_buckets WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM rate_buckets
             WHERE (granularity = 's' AND bucket < extract(epoch FROM now())::bigint - 120)
                OR (granularity = 'm' AND bucket < extract(epoch FROM now())::bigint / 60 - 1500)
             LIMIT $1))
        """

    /// A finished activity stays readable (GET) this long; its deliveries are long done by then (an end
    /// expires 12 hours after the start).
    public static let finishedActivityRetention = "7 days"

    static let deleteFinishedActivities = """
        DELETE FROM live_activities WHERE id = ANY (ARRAY(
            SELECT id FROM live_activities
             WHERE status <> 'active' AND ended_at < now() - interval '\(finishedActivityRetention)' LIMIT $1))
        """

    /// A broadcast channel that ended or failed stays readable (GET, with its audit rows, deleted with it) as
    /// long as a finished activity does.
    public static let deleteFinishedChannels = """
        DELETE FROM live_channels WHERE id = ANY (ARRAY(
            SELECT id FROM live_channels
             WHERE status IN ('ended', 'failed') AND updated_at < now() - interval '\(finishedActivityRetention)' LIMIT $1))
        """

    /// A delivered webhook event is kept a week (support questions); a failed one 30 days, for
    /// `heraldctl webhooks replay`.
    public static let deliveredWebhookRetention = "7 days"
    public static let failedWebhookRetention = "30 days"

    static let deleteFinishedWebhookEvents = """
        DELETE FROM webhook_events WHERE id = ANY (ARRAY(
            SELECT id FROM webhook_events
             WHERE (state = 'delivered' AND finished_at < now() - interval '\(deliveredWebhookRetention)')
                OR (state = 'failed' AND finished_at < now() - interval '\(failedWebhookRetention)')
             LIMIT $1))
        """

    /// A reminder stays this long after its time: cancelling it is answered as a repeat (204), not 404.
    /// One still pending then (a worker outage) is kept until a worker takes it.
    public static let finishedReminderRetention = "7 days"

    /// Public for its query-plan test (Tests/StoreTests/ReminderQueryPlanTests.swift).
    public static let deleteFinishedReminders = """
        DELETE FROM reminders WHERE id = ANY (ARRAY(
            SELECT id FROM reminders
             WHERE at < now() - interval '\(finishedReminderRetention)' AND NOT herald_reminder_pending(deliveries)
             LIMIT $1))
        """

    static let deleteExpiredIdempotencyKeys = """
        DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM idempotency_keys WHERE created_at < now() - interval '25 hours' LIMIT $1))
        """
}
