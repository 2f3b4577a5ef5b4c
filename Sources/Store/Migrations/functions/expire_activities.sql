-- One batch of the TTL sweep: up to `p_limit` active activities past their expiry become 'expired' and
-- their stored ends are queued (bulk lane). SKIP LOCKED: several workers sweep at once, each activity exactly once,
-- and an activity a partner is changing right now is taken by the next sweep. Returns how many expired.
CREATE OR REPLACE FUNCTION herald_expire_activities(p_limit integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_ids     uuid[];
    v_apns    text[];
    v_fcm     text[];
    v_expires timestamptz[];
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
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at
    )
    SELECT coalesce(array_agg(id), '{}'), array_agg(apns_end_payload), array_agg(fcm_end_payload),
           array_agg(created_at + interval '12 hours')
      INTO v_ids, v_apns, v_fcm, v_expires
      FROM done;
    IF cardinality(v_ids) > 0 THEN
        -- In the bulk lane: ends of a large sweep go out as fast as the workers have room beside realtime
        -- traffic, never ahead of it (a sweep of 100,000 activities must not stall pushes).
        PERFORM herald_activity_dispatch(v_ids, 'end', v_apns, NULL, v_fcm, NULL,
                                         array_fill(5::smallint, ARRAY[cardinality(v_ids)]), v_expires, NULL,
                                         1::smallint);
        PERFORM pg_notify('herald_deliveries', '');
    END IF;
    RETURN cardinality(v_ids);
END
$$;
