-- name: queue
-- returns: QueueStats.Group
-- Every outbox row, grouped by state, lane and mini-app, counting deliveries (a group row its members not yet done).
-- The outbox holds only unfinished work (finished rows move to history), so this stays a scan of a small table.
SELECT CASE WHEN d.state = 'pending' AND d.available_at > now() THEN 'scheduled' ELSE d.state END AS state,
       d.lane, p.mini_app_id, sum(herald_delivery_weight(d.member_count, d.members_done))::int8 AS deliveries
  FROM deliveries d JOIN partners p ON p.id = d.partner_id
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3;

-- name: oldestDue
-- returns: StatsStore.OldestDueSeconds
-- How long the oldest due row has waited, in seconds (0 when none is due): the head of every (lane, partner) queue
-- (Migrations/functions/queue_heads.sql's loose index scan, one probe per queue, as the worker's oldest-due gauge
-- reads it); a head not due yet means nothing is due there.
SELECT coalesce(extract(epoch FROM now() - min(oldest_available_at)), 0)::float8 AS oldest_due_seconds
  FROM herald_queue_heads() WHERE oldest_available_at <= now();

-- name: outcomes
-- parameters: shortSeconds Int, longSeconds Int
-- returns: StatsStore.OutcomeCounts
-- Deliveries finished within each window, by outcome (a sent group row counts its members,
-- Migrations/016_delivery_groups.sql). $1 the short window, $2 the long one, in seconds. The BRIN index on
-- finished_at (Migrations/010_operations.sql) keeps the scan to the long window's block ranges.
SELECT outcome,
       coalesce(sum(coalesce(cardinality(members), 1))
                    FILTER (WHERE finished_at > now() - make_interval(secs => $1)), 0)::int8 AS short_window,
       sum(coalesce(cardinality(members), 1))::int8 AS long_window
  FROM delivery_history
 WHERE finished_at > now() - make_interval(secs => $2)
 GROUP BY outcome;
