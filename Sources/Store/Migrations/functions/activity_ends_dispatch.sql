-- Queues the stored ends of activities that just ended (`p_ids`, their rows already updated with the end), at
-- `p_priority` in lane `p_lane`, each with its audit row of kind `p_kind` (functions/activity_event.sql). An
-- activity that follows a broadcast channel ends with the channel's end, which reaches every follower in one
-- broadcast (functions/channel_claim.sql): nothing is sent for it here. The end of the activity a start replaces
-- (functions/activity_start.sql), the TTL sweep (functions/expire_activities.sql) and a partner's revocation
-- (functions/partner_end_activities.sql) end activities this way. `p_notify`: tell listening workers when any end
-- was queued (the sweep and a revocation do; a start's intake tells them after its commit).
CREATE OR REPLACE FUNCTION herald_activity_ends_dispatch(p_ids uuid[], p_kind text, p_priority smallint,
                                                         p_lane smallint, p_notify boolean)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_ids     uuid[];
    v_apns    text[];
    v_fcm     text[];
    v_expires timestamptz[];
BEGIN
    SELECT coalesce(array_agg(a.id), '{}'), array_agg(a.apns_end_payload), array_agg(a.fcm_end_payload),
           array_agg(a.created_at + interval '12 hours')
      INTO v_ids, v_apns, v_fcm, v_expires
      FROM live_activities a
     WHERE a.id = ANY (p_ids) AND a.channel_id IS NULL;
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;
    PERFORM herald_activity_event(v_ids, 'end', p_kind, v_apns, NULL, v_fcm, NULL,
                                  array_fill(p_priority, ARRAY[cardinality(v_ids)]), v_expires, p_lane);
    IF p_notify THEN
        PERFORM pg_notify('herald_deliveries', '');
    END IF;
END
$$;
