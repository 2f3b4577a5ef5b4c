-- One batch of the TTL sweep: up to `p_limit` active activities past their expiry become 'expired' and
-- their stored ends are queued (bulk lane). SKIP LOCKED: several workers sweep at once, each activity exactly once,
-- and an activity a partner is changing right now is taken by the next sweep. Each expiry writes its audit
-- row (kind 'expire', the last state; sql/033_live_activity_events.sql). Returns how many expired.
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
    v_partners uuid[];
    v_states  jsonb[];
    v_expired integer;
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
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at, a.partner_id, a.state, a.channel_id
    )
    -- An activity that follows a broadcast channel ends with the channel's end, which reaches every follower in
    -- one broadcast (functions/channel_claim.sql): nothing is sent for it here.
    SELECT count(*), coalesce(array_agg(id) FILTER (WHERE channel_id IS NULL), '{}'),
           array_agg(apns_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(fcm_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(created_at + interval '12 hours') FILTER (WHERE channel_id IS NULL),
           array_agg(partner_id) FILTER (WHERE channel_id IS NULL), array_agg(state) FILTER (WHERE channel_id IS NULL)
      INTO v_expired, v_ids, v_apns, v_fcm, v_expires, v_partners, v_states
      FROM done;
    -- In the bulk lane: ends of a large sweep go out as fast as the workers have room beside realtime
    -- traffic, never ahead of it (a sweep of 100,000 activities must not stall pushes).
    PERFORM herald_activity_ends_dispatch(v_ids, v_apns, v_fcm, v_expires, v_partners, v_states, 'expire',
                                          5::smallint, 1::smallint);
    RETURN v_expired;
END
$$;
