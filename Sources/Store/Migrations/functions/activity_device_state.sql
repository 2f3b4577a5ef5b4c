-- The host reports what ActivityKit says of an activity on one device (`activityStateUpdates`).
-- 'dismissed' and 'ended': nothing more is sent to that device (its pending rows are dropped as
-- superseded, its held event forgotten) and the activity is 'dismissed' once no device shows it
-- (herald_activity_settle); 'active' confirms the start (an unconfirmed device is back); 'stale' is
-- recorded; 'not_promoted' (an Android phone shows it as an ordinary notification: the user or the system
-- declined Android 16's Live Update) is recorded and sending continues. Returns 'not_found' (no such
-- activity, or not started on that device), 'not_android' ('not_promoted' from an iPhone: nothing is
-- written) or the activity's status afterwards. The dropped rows and the forgotten held event count
-- `superseded` for their events (sql/033_live_activity_events.sql).
CREATE OR REPLACE FUNCTION herald_activity_device_state(p_id uuid, p_device text, p_state text)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_status text;
    v_held uuid;
    v_service text;
    v_superseded uuid[];
BEGIN
    SELECT a.status INTO v_status FROM live_activities a WHERE a.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    SELECT t.held_event_id, t.service INTO v_held, v_service FROM live_activity_targets t
     WHERE t.activity_id = p_id AND t.device_id = p_device;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF p_state = 'not_promoted' AND v_service <> 'fcm' THEN
        RETURN 'not_android';
    END IF;
    UPDATE live_activity_targets t
       SET device_state = p_state, device_state_at = now(),
           held_event = CASE WHEN p_state IN ('dismissed', 'ended') THEN NULL ELSE t.held_event END,
           held_event_id = CASE WHEN p_state IN ('dismissed', 'ended') THEN NULL ELSE t.held_event_id END
     WHERE t.activity_id = p_id AND t.device_id = p_device;
    IF p_state IN ('dismissed', 'ended') THEN
        WITH dropped AS (
            DELETE FROM deliveries d
             WHERE d.activity_id = p_id AND d.device_id = p_device AND d.state = 'pending'
            RETURNING d.*
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at, activity_event,
                                          request_created_at)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, 'superseded', attempts,
                   'dismissed_on_device', created_at, now(), activity_event, request_created_at
              FROM dropped
        )
        SELECT coalesce(array_agg(activity_event_id) FILTER (WHERE activity_event_id IS NOT NULL), '{}')
          INTO v_superseded FROM dropped;
        IF v_held IS NOT NULL THEN
            v_superseded := v_superseded || v_held;
        END IF;
        IF cardinality(v_superseded) > 0 THEN
            PERFORM herald_activity_event_counts(v_superseded, NULL, NULL,
                                                 array_fill(1, ARRAY[cardinality(v_superseded)]));
        END IF;
        IF v_status = 'active' AND herald_activity_settle(p_id) THEN
            v_status := 'dismissed';
        END IF;
    END IF;
    RETURN v_status;
END
$$;
