-- name: ensurePartitions
-- parameters: table String, months Int
-- Monthly partitions of table $1 from last month, $2 months of them
-- (Migrations/functions/ensure_monthly_partitions.sql).
SELECT herald_ensure_monthly_partitions($1, now() - interval '1 month', $2);

-- name: expiredPartitions
-- parameters: table String, retentionDays Int
-- returns: MaintenanceStore.Partition
-- The partitions of table $1 that ended more than $2 days ago, by name
-- (Migrations/functions/expired_monthly_partitions.sql).
SELECT herald_expired_monthly_partitions($1, now() - make_interval(days => $2)) AS partition_name;

-- name: listPartitions
-- parameters: tables [String]
-- returns: MaintenanceStore.PartitionBounds
-- The partitions of the tables $1 with their bounds, by table and partition.
SELECT p.relname AS table_name, c.relname AS partition_name, pg_get_expr(c.relpartbound, c.oid) AS bounds
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
 WHERE p.relname = ANY($1::text[]) ORDER BY 1, 2;

-- name: deleteExpiredRateBuckets
-- parameters: batchSize Int
-- At most $1 rate buckets that left their windows (Migrations/functions/rate_counts.sql).
DELETE FROM rate_buckets WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM rate_buckets
     WHERE (granularity = 's' AND bucket < extract(epoch FROM now())::bigint - 120)
        OR (granularity = 'm' AND bucket < extract(epoch FROM now())::bigint / 60 - 1500)
     LIMIT $1));

-- name: deleteExpiredIdempotencyKeys
-- parameters: batchSize Int
-- At most $1 idempotency keys older than 25 hours.
DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM idempotency_keys WHERE created_at < now() - interval '25 hours' LIMIT $1));

-- name: deleteExpiredMedia
-- parameters: batchSize Int
-- At most $1 media past their expiry (sql/060_media.sql): already 404 since then. Walks media_expires.
DELETE FROM media WHERE ctid = ANY (ARRAY(SELECT ctid FROM media WHERE expires_at <= now() LIMIT $1));

-- name: deleteFinishedActivities
-- parameters: batchSize Int
-- At most $1 Live Activities finished more than 7 days ago, with their targets and audit rows: a finished
-- activity stays readable (GET) that long; its deliveries are long done by then (an end expires 12 hours after
-- the start).
DELETE FROM live_activities WHERE id = ANY (ARRAY(
    SELECT id FROM live_activities
     WHERE status <> 'active' AND ended_at < now() - interval '7 days' LIMIT $1));

-- name: deleteFinishedChannels
-- parameters: batchSize Int
-- At most $1 broadcast channels that ended or failed more than 7 days ago: readable (GET, with their audit rows,
-- deleted with them) as long as a finished activity.
DELETE FROM live_channels WHERE id = ANY (ARRAY(
    SELECT id FROM live_channels
     WHERE status IN ('ended', 'failed') AND updated_at < now() - interval '7 days' LIMIT $1));

-- name: deleteFinishedWebhookEvents
-- parameters: batchSize Int
-- At most $1 webhook events delivered more than 7 days ago (support questions) or failed more than 30 days ago (for
-- `heraldctl webhooks replay`).
DELETE FROM webhook_events WHERE id = ANY (ARRAY(
    SELECT id FROM webhook_events
     WHERE (state = 'delivered' AND finished_at < now() - interval '7 days')
        OR (state = 'failed' AND finished_at < now() - interval '30 days')
     LIMIT $1));

-- name: deleteFinishedReminders
-- parameters: batchSize Int
-- At most $1 reminders whose time passed more than 7 days ago: until then cancelling one is answered as a repeat
-- (204), not 404. One still pending then (a worker outage) is kept until a worker takes it.
DELETE FROM reminders WHERE id = ANY (ARRAY(
    SELECT id FROM reminders
     WHERE at < now() - interval '7 days' AND NOT herald_reminder_pending(deliveries)
     LIMIT $1));

-- name: deleteOldConsoleSessions
-- parameters: batchSize Int
-- At most $1 console sessions a day after they expired or were signed out (kept that long for the audit trail).
DELETE FROM console_sessions WHERE token_hash = ANY (ARRAY(
    SELECT token_hash FROM console_sessions
     WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
     LIMIT $1));

-- name: deleteOldSignInFailures
-- parameters: batchSize Int
-- At most $1 failed console sign-ins of windows that ended long ago (a window is a minute; an hour leaves any
-- window a setting could give room).
DELETE FROM console_sign_in_failures WHERE client = ANY (ARRAY(
    SELECT client FROM console_sign_in_failures WHERE window_start < now() - interval '1 hour' LIMIT $1));

-- name: deleteOldWorkerHeartbeats
-- parameters: batchSize Int
-- At most $1 heartbeats of workers not seen for a day (stopped or replaced long ago).
DELETE FROM worker_heartbeats WHERE worker_id = ANY (ARRAY(
    SELECT worker_id FROM worker_heartbeats WHERE last_seen_at < now() - interval '1 day' LIMIT $1));

-- name: deleteOldAdminAudit
-- parameters: batchSize Int
-- At most $1 admin audit entries older than 400 days (Migrations/047_admin_audit.sql): over a year, for a
-- yearly review (admin_audit_at).
DELETE FROM admin_audit WHERE id = ANY (ARRAY(
    SELECT id FROM admin_audit WHERE at < now() - interval '400 days' LIMIT $1));

-- name: detachPartition
-- Detaches partition {{partition}} of {{table}} CONCURRENTLY (outside any transaction), so inserts into the parent
-- never wait behind the ACCESS EXCLUSIVE lock a plain DROP of a partition takes on its parent. DDL names its
-- tables: filled through NamedSQL.filling from the partitioned tables' names and the partitions Postgres listed.
-- unprepared
-- identifiers: table, partition
ALTER TABLE {{table}} DETACH PARTITION {{partition}} CONCURRENTLY;

-- name: dropDetachedPartition
-- Drops partition {{partition}}, detached by detachPartition.
-- unprepared
-- identifiers: partition
DROP TABLE {{partition}};
