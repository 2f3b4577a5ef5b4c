-- One batch of the sweep of starts that created nothing: an iPhone whose update token has not come back
-- p_seconds after its start reached APNs (a start ActivityKit refused, Live Activities switched off) is
-- 'unconfirmed'; its held update or end is dropped (it could never be sent), and an activity no device
-- shows any more is 'dismissed' (herald_activity_settle). Each activity is locked before its target, in
-- the order herald_activity_device_state takes them, and skipped while a partner's change holds it (the
-- next sweep takes it). The dropped held event counts `superseded` for its event
-- (sql/033_live_activity_events.sql). Returns how many devices became unconfirmed.
CREATE OR REPLACE FUNCTION herald_activity_unconfirmed(p_seconds integer, p_limit integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_due    record;
    v_marked integer := 0;
    v_held   uuid;
BEGIN
    FOR v_due IN
        SELECT t.activity_id, t.device_id FROM live_activity_targets t
         WHERE t.service = 'apns' AND t.update_token IS NULL AND t.device_state IS NULL AND t.start_sent_at IS NOT NULL
           AND t.start_sent_at <= now() - make_interval(secs => p_seconds)
           -- A phone that follows a channel gets no update token: only its own word tells.
           AND NOT EXISTS (SELECT 1 FROM live_activities a WHERE a.id = t.activity_id AND a.channel_id IS NOT NULL)
         ORDER BY t.start_sent_at
         LIMIT p_limit
    LOOP
        PERFORM 1 FROM live_activities a WHERE a.id = v_due.activity_id FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND;
        -- Read under the activity's lock: no change of it can move the held event meanwhile.
        SELECT t.held_event_id INTO v_held FROM live_activity_targets t
         WHERE t.activity_id = v_due.activity_id AND t.device_id = v_due.device_id;
        UPDATE live_activity_targets t
           SET device_state = 'unconfirmed', device_state_at = now(), held_event = NULL, held_event_id = NULL
         WHERE t.activity_id = v_due.activity_id AND t.device_id = v_due.device_id
           AND t.update_token IS NULL AND t.device_state IS NULL;
        CONTINUE WHEN NOT FOUND;
        v_marked := v_marked + 1;
        IF v_held IS NOT NULL THEN
            PERFORM herald_activity_event_counts(ARRAY[v_held], NULL, NULL, ARRAY[1]);
        END IF;
        PERFORM herald_activity_settle(v_due.activity_id);
    END LOOP;
    RETURN v_marked;
END
$$;
