-- The partner's end, with its audit row (sql/033_live_activity_events.sql: the final state, the partner's
-- alert title and dismissAt as given). Returns 'ended_now' or a refusal of herald_activity_begin_change. The
-- end keeps the partner's priority (`p_priority`: 10 with an alert, else 5), stored for an iPhone whose
-- update token comes later (herald_activity_token).
CREATE OR REPLACE FUNCTION herald_activity_end(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_state jsonb, p_dismiss timestamptz, p_timestamp bigint, p_apns text, p_fcm text,
    p_priority smallint, p_alert_title text DEFAULT NULL, p_dismiss_given timestamptz DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_refusal text;
    v_created timestamptz;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET state = p_state, status = 'ended', version = version + 1, last_timestamp = p_timestamp,
           end_timestamp = p_timestamp, updated_at = p_now, ended_at = p_now, dismiss_at = p_dismiss,
           apns_end_payload = p_apns, fcm_end_payload = p_fcm, apns_end_priority = p_priority
     WHERE id = p_id
    RETURNING created_at INTO v_created;
    PERFORM herald_activity_event(ARRAY[p_id], 'end', 'end', ARRAY[p_apns], NULL, ARRAY[p_fcm], NULL, ARRAY[p_priority],
                                  ARRAY[v_created + interval '12 hours'], p_key => p_key,
                                  p_alert_title => p_alert_title, p_dismiss => p_dismiss_given);
    RETURN 'ended_now';
END
$$;
