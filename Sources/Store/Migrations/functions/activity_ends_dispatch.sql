-- Queues the stored ends of activities that just ended (`p_apns`, `p_fcm`; their rows' expiry `p_expires`), at
-- `p_priority` in lane `p_lane`, each with its audit row of kind `p_kind` (the activity's partner and last state),
-- and tells listening workers. The TTL sweep (functions/expire_activities.sql) and a partner's revocation
-- (functions/partner_revoke.sql) end activities this way.
CREATE OR REPLACE FUNCTION herald_activity_ends_dispatch(p_ids uuid[], p_apns text[], p_fcm text[],
                                                         p_expires timestamptz[], p_partners uuid[], p_states jsonb[],
                                                         p_kind text, p_priority smallint, p_lane smallint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_events uuid[] := ARRAY(SELECT herald_uuid_v7() FROM generate_series(1, cardinality(p_ids)));
BEGIN
    IF cardinality(p_ids) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, devices_apns, devices_fcm)
    SELECT e.id, herald_uuid_v7_time(e.id), e.activity_id, e.partner_id, p_kind, e.state, d.o_apns, d.o_fcm
      FROM herald_activity_dispatch(p_ids, 'end', p_apns, NULL, p_fcm, NULL,
                                    array_fill(p_priority, ARRAY[cardinality(p_ids)]), p_expires, NULL, p_lane,
                                    v_events) d
      JOIN unnest(p_ids, v_events, p_partners, p_states) AS e (activity_id, id, partner_id, state)
        ON e.activity_id = d.o_activity;
    PERFORM pg_notify('herald_deliveries', '');
END
$$;
