-- Adds outcomes to Live Activity events (sql/033_live_activity_events.sql): the completion's sent and
-- failed, and the superseded deliveries a change, a dismissal or the unconfirmed sweep leaves. NULL ids
-- (rows queued before events existed) are skipped; a NULL count is 0. Rows are locked in id order, as the
-- completion locks push_requests, so two callers counting the same events cannot deadlock; each is found
-- by its primary key (id, and the created_at its id carries), one probe per event (the LATERAL leaves the
-- planner no other way, whatever the generic plan thinks of the partition's size).
CREATE OR REPLACE FUNCTION herald_activity_event_counts(p_events uuid[], p_sent integer[], p_failed integer[],
                                                        p_superseded integer[])
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    WITH counts AS (
        SELECT c.id, herald_uuid_v7_time(c.id) AS created_at, sum(coalesce(c.sent, 0)) AS sent,
               sum(coalesce(c.failed, 0)) AS failed, sum(coalesce(c.superseded, 0)) AS superseded
          FROM unnest(p_events, p_sent, p_failed, p_superseded) AS c (id, sent, failed, superseded)
         WHERE c.id IS NOT NULL
         GROUP BY c.id
         ORDER BY c.id
    ), locked AS (
        SELECT e.id, e.created_at, c.sent, c.failed, c.superseded
          FROM counts c
         CROSS JOIN LATERAL (SELECT x.id, x.created_at FROM live_activity_events x
                              WHERE x.id = c.id AND x.created_at = c.created_at
                                FOR UPDATE) e
    )
    UPDATE live_activity_events e
       SET sent = e.sent + l.sent, failed = e.failed + l.failed, superseded = e.superseded + l.superseded
      FROM locked l
     WHERE e.id = l.id AND e.created_at = l.created_at
       -- Bounds the scan of e to the events counted, whatever join the plan makes.
       AND e.id = ANY (p_events);
END
$$;
