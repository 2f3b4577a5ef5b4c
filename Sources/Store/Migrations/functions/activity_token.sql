-- The host reports an activity's update token for one iPhone. Returns 'not_found' (no such activity or
-- it was not started on that device), 'not_ios' (the device is an Android phone), 'unchanged', 'stored',
-- or 'sent' (the token released an update or end held for it), at the priority the held event was given.
CREATE OR REPLACE FUNCTION herald_activity_token(p_id uuid, p_device text, p_token text)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_activity record;
    v_target record;
BEGIN
    SELECT a.* INTO v_activity FROM live_activities a WHERE a.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    SELECT t.* INTO v_target FROM live_activity_targets t WHERE t.activity_id = p_id AND t.device_id = p_device;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF v_target.service <> 'apns' THEN
        RETURN 'not_ios';
    ELSIF v_target.update_token = p_token AND v_target.update_token_invalidated_at IS NULL THEN
        RETURN 'unchanged';
    END IF;
    UPDATE live_activity_targets
       SET update_token = p_token, update_token_invalidated_at = NULL, held_event = NULL, held_event_id = NULL,
           -- A token proves the activity exists after all: an unconfirmed device is back.
           device_state = CASE WHEN device_state = 'unconfirmed' THEN NULL ELSE device_state END
     WHERE activity_id = p_id AND device_id = p_device;
    IF v_target.held_event IS NULL THEN
        RETURN 'stored';
    END IF;
    -- The released row delivers the held event (its audit row counted this device when it was held).
    IF v_target.held_event = 'end' THEN
        PERFORM herald_activity_event(ARRAY[p_id], 'end', NULL, ARRAY[v_activity.apns_end_payload], NULL,
                                      ARRAY[v_activity.fcm_end_payload], NULL, ARRAY[v_activity.apns_end_priority],
                                      ARRAY[v_activity.created_at + interval '12 hours'], p_device => p_device,
                                      p_events => ARRAY[v_target.held_event_id]);
    ELSE
        PERFORM herald_activity_event(ARRAY[p_id], 'update', NULL, ARRAY[v_activity.apns_update_payload], NULL,
                                      ARRAY[NULL::text], NULL,
                                      ARRAY[coalesce(v_activity.apns_update_priority, 5::smallint)],
                                      ARRAY[v_activity.expires_at], p_device => p_device,
                                      p_events => ARRAY[v_target.held_event_id]);
    END IF;
    RETURN 'sent';
END
$$;
