-- An update merged by the intake into version `p_version`. Returns 'updated', 'updated_silent' or a
-- refusal of herald_activity_begin_change.
--
-- An update with an alert (`p_priority` 10) spends the activity's alerted budget (`p_alerted_limit` an
-- hour, herald_activity_alert_spend). Once it is spent the update still goes out, as the silent variant
-- the intake rendered beside it (`p_apns_silent`, `p_fcm_silent`, priority 5), answered with
-- `p_response_silent` (`"alert":"dropped_budget"`), and the result is 'updated_silent'. With its audit row
-- (sql/033_live_activity_events.sql): the partner's patch, alert title and ttlSeconds as given.
CREATE OR REPLACE FUNCTION herald_activity_update(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_state jsonb, p_expires timestamptz, p_timestamp bigint, p_apns text, p_apns_start text,
    p_fcm text, p_fcm_start text, p_priority smallint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint,
    p_relevance smallint, p_alerted_limit integer, p_apns_silent text, p_fcm_silent text, p_response_silent text,
    p_patch jsonb DEFAULT NULL, p_alert_title text DEFAULT NULL, p_ttl_seconds integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_refusal  text;
    v_alerted  timestamptz[];
    v_spent    timestamptz[];
    v_silent   boolean := false;
    v_apns     text := p_apns;
    v_fcm      text := p_fcm;
    v_priority smallint := p_priority;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    -- begin_change holds the row lock: no other change of this activity spends the budget meanwhile.
    SELECT a.alerted_at INTO v_alerted FROM live_activities a WHERE a.id = p_id;
    IF p_priority = 10 THEN
        v_spent := herald_activity_alert_spend(v_alerted, p_now, p_alerted_limit);
        IF v_spent IS NULL THEN
            v_silent := true;
            v_apns := p_apns_silent;
            v_fcm := p_fcm_silent;
            v_priority := 5;
            IF p_key IS NOT NULL THEN
                UPDATE idempotency_keys SET response = p_response_silent
                 WHERE partner_id = p_partner AND key = p_key;
            END IF;
        ELSE
            v_alerted := v_spent;
        END IF;
    END IF;
    UPDATE live_activities
       SET state = p_state, version = version + 1, last_timestamp = p_timestamp, updated_at = p_now,
           expires_at = p_expires, apns_update_payload = v_apns, apns_update_priority = v_priority,
           apns_end_payload = p_apns_end, fcm_end_payload = p_fcm_end, end_timestamp = p_end_timestamp,
           relevance_score = p_relevance, alerted_at = v_alerted
     WHERE id = p_id;
    PERFORM herald_activity_event(ARRAY[p_id], 'update', 'update', ARRAY[v_apns], ARRAY[p_apns_start], ARRAY[v_fcm],
                                  ARRAY[p_fcm_start], ARRAY[v_priority], ARRAY[p_expires], p_states => ARRAY[p_patch],
                                  p_key => p_key, p_alert_title => p_alert_title, p_ttl_seconds => p_ttl_seconds);
    RETURN CASE WHEN v_silent THEN 'updated_silent' ELSE 'updated' END;
END
$$;
