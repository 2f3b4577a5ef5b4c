-- Replaces the active activity of `p_user` and `p_mini_app`, if it has one, for a start at `p_now`: it becomes
-- 'replaced' and its end is queued (functions/activity_ends_dispatch.sql). When it is `p_old`, the activity the
-- intake read, the end is the one the intake rendered for it (`p_old_*`: dismissed at once) at priority 10, paid
-- from that activity's alerted budget (`p_alerted_limit` an hour), or 5 once that budget is spent; the priority is
-- returned. Otherwise (another start replaced `p_old` since the intake read it; a scheduled start, which the worker
-- sends without the signing keys, `p_old` NULL) the end is the stored TTL end of whichever is active, at 5, and
-- NULL is returned. The caller holds the user's advisory lock (functions/activity_start.sql,
-- functions/activity_start_due.sql).
CREATE OR REPLACE FUNCTION herald_activity_replace(
    p_user text, p_mini_app text, p_now timestamptz, p_old uuid, p_old_apns_end text, p_old_fcm_end text,
    p_old_timestamp bigint, p_alerted_limit integer)
RETURNS smallint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_old      record;
    v_spent    timestamptz[];
    v_priority smallint := 5;
    v_paid     smallint;
BEGIN
    SELECT a.id, a.alerted_at INTO v_old
      FROM live_activities a
     WHERE a.user_id = p_user AND a.mini_app_id = p_mini_app AND a.status = 'active'
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    IF v_old.id = p_old THEN
        v_spent := herald_activity_alert_spend(v_old.alerted_at, p_now, p_alerted_limit);
        v_priority := CASE WHEN v_spent IS NULL THEN 5 ELSE 10 END;
        v_paid := v_priority;
    END IF;
    UPDATE live_activities a
       SET status = 'replaced', ended_at = p_now, updated_at = p_now, version = a.version + 1,
           dismiss_at = CASE WHEN a.id = p_old THEN p_now ELSE a.expires_at END,
           apns_end_payload = CASE WHEN a.id = p_old THEN p_old_apns_end ELSE a.apns_end_payload END,
           fcm_end_payload = CASE WHEN a.id = p_old THEN p_old_fcm_end ELSE a.fcm_end_payload END,
           end_timestamp = CASE WHEN a.id = p_old THEN p_old_timestamp ELSE a.end_timestamp END,
           last_timestamp = CASE WHEN a.id = p_old THEN p_old_timestamp ELSE a.end_timestamp END,
           apns_end_priority = v_priority, alerted_at = coalesce(v_spent, a.alerted_at)
     WHERE a.id = v_old.id;
    -- Its end goes out, unless it follows a channel: no update token ends it, the new start takes its place.
    PERFORM herald_activity_ends_dispatch(ARRAY[v_old.id], 'replace-end', v_priority, 0::smallint, false);
    RETURN v_paid;
END
$$;
