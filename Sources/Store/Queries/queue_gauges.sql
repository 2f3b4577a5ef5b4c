-- name: dueByLane
-- parameters: countLimit Int
-- returns: QueueGaugeStore.LaneDue
-- Each lane's due deliveries (counted over at most $1 rows) and the age of its oldest due row, in seconds.
-- The count is a range of the partial index deliveries_due_partner per lane (its first column) with `available_at`
-- checked in the index; the oldest due row comes from the queue heads (herald_queue_heads: one index probe per
-- partner), since the index orders `available_at` within a partner, not within a lane.
WITH heads AS MATERIALIZED (
    SELECT lane, min(oldest_available_at) AS oldest FROM herald_queue_heads()
     WHERE oldest_available_at <= now() GROUP BY lane)
SELECT l.lane::int8 AS lane,
       (SELECT coalesce(sum(due.member_count), 0) FROM (
            SELECT d.member_count FROM deliveries d
             WHERE d.state = 'pending' AND d.lane = l.lane AND d.available_at <= now()
             LIMIT $1) due)::int8 AS due,
       coalesce(extract(epoch FROM now() - h.oldest), 0)::float8 AS oldest_due_seconds
  FROM (VALUES (0::smallint), (1::smallint)) l(lane) LEFT JOIN heads h ON h.lane = l.lane
 ORDER BY l.lane;
