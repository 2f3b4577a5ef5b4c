-- Queues the stored ends of activities that just ended (`p_ids`, their rows already updated with the end), at
-- `p_priority` in lane `p_lane`, each with its audit row of kind `p_kind` (the activity's partner and last state),
-- and tells listening workers. An activity that follows a broadcast channel ends with the channel's end, which
-- reaches every follower in one broadcast (functions/channel_claim.sql): nothing is sent for it here. The TTL sweep
-- (functions/expire_activities.sql) and a partner's revocation (functions/partner_end_activities.sql) end
-- activities this way.
CREATE OR REPLACE FUNCTION herald_activity_ends_dispatch(p_ids uuid[], p_kind text, p_priority smallint,
                                                         p_lane smallint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_ids      uuid[];
    v_apns     text[];
    v_fcm      text[];
    v_expires  timestamptz[];
    v_partners uuid[];
    v_states   jsonb[];
    v_events   uuid[];
BEGIN
    SELECT coalesce(array_agg(a.id), '{}'), array_agg(a.apns_end_payload), array_agg(a.fcm_end_payload),
           array_agg(a.created_at + interval '12 hours'), array_agg(a.partner_id), array_agg(a.state)
      INTO v_ids, v_apns, v_fcm, v_expires, v_partners, v_states
      FROM live_activities a
     WHERE a.id = ANY (p_ids) AND a.channel_id IS NULL;
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;
    v_events := ARRAY(SELECT herald_uuid_v7() FROM generate_series(1, cardinality(v_ids)));
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, devices_apns, devices_fcm)
    SELECT e.id, herald_uuid_v7_time(e.id), e.activity_id, e.partner_id, p_kind, e.state, d.o_apns, d.o_fcm
      FROM herald_activity_dispatch(v_ids, 'end', v_apns, NULL, v_fcm, NULL,
                                    array_fill(p_priority, ARRAY[cardinality(v_ids)]), v_expires, NULL, p_lane,
                                    v_events) d
      JOIN unnest(v_ids, v_events, v_partners, v_states) AS e (activity_id, id, partner_id, state)
        ON e.activity_id = d.o_activity;
    PERFORM pg_notify('herald_deliveries', '');
END
$$;
