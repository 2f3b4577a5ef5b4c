-- One batch of the TTL sweep: up to `p_limit` active activities past their expiry become 'expired' and
-- their stored ends are queued (bulk lane). SKIP LOCKED: several workers sweep at once, each activity exactly once,
-- and an activity a partner is changing right now is taken by the next sweep. Each expiry writes its audit
-- row (kind 'expire', the last state; sql/033_live_activity_events.sql). Returns how many expired.
CREATE OR REPLACE FUNCTION herald_expire_activities(p_limit integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_ids uuid[];
BEGIN
    WITH due AS (
        SELECT a.id FROM live_activities a
         WHERE a.status = 'active' AND a.expires_at <= now()
         ORDER BY a.expires_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    ), done AS (
        UPDATE live_activities a
           SET status = 'expired', ended_at = now(), updated_at = now(), dismiss_at = a.expires_at,
               last_timestamp = a.end_timestamp, version = a.version + 1
          FROM due WHERE a.id = due.id
        RETURNING a.id
    )
    SELECT coalesce(array_agg(id), '{}') INTO v_ids FROM done;
    -- In the bulk lane: ends of a large sweep go out as fast as the workers have room beside realtime
    -- traffic, never ahead of it (a sweep of 100,000 activities must not stall pushes).
    PERFORM herald_activity_ends_dispatch(v_ids, 'expire', 5::smallint, 1::smallint, true);
    RETURN cardinality(v_ids);
END
$$;
