-- An update merged by the intake into version `p_version`, with its audit row (sql/033_live_activity_events.sql:
-- the partner's patch, alert title and ttlSeconds as given). Returns 'updated' or a refusal of
-- herald_activity_begin_change.
CREATE OR REPLACE FUNCTION herald_activity_update(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_state jsonb, p_expires timestamptz, p_timestamp bigint, p_apns text, p_apns_start text,
    p_fcm text, p_fcm_start text, p_priority smallint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint,
    p_patch jsonb DEFAULT NULL, p_alert_title text DEFAULT NULL, p_ttl_seconds integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_refusal text;
    v_event uuid;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET state = p_state, version = version + 1, last_timestamp = p_timestamp, updated_at = p_now,
           expires_at = p_expires, apns_update_payload = p_apns, apns_update_priority = p_priority,
           apns_end_payload = p_apns_end, fcm_end_payload = p_fcm_end, end_timestamp = p_end_timestamp
     WHERE id = p_id;
    v_event := herald_uuid_v7();
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, alert_title, ttl_seconds,
                                      idempotency_key, devices_apns, devices_fcm)
    SELECT v_event, herald_uuid_v7_time(v_event), p_id, p_partner, 'update', p_patch, p_alert_title, p_ttl_seconds,
           p_key, d.o_apns, d.o_fcm
      FROM herald_activity_dispatch(ARRAY[p_id], 'update', ARRAY[p_apns], ARRAY[p_apns_start], ARRAY[p_fcm],
                                    ARRAY[p_fcm_start], ARRAY[p_priority], ARRAY[p_expires],
                                    p_events => ARRAY[v_event]) d;
    RETURN 'updated';
END
$$;
