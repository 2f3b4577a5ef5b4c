-- The partner's DELETE of a scheduled start that has not been sent (sql/062_scheduled_starts.sql): the activity
-- becomes 'cancelled', nothing is ever sent for it, and its audit row of kind 'cancel' is written (it reaches no
-- device: a scheduled activity has no target). Under the activity's row lock, so the workers' sweep
-- (functions/activity_start_due.sql, SKIP LOCKED) either started it before or never will. Returns 'cancelled', or a
-- refusal of herald_change_refusal: 'not_found', 'conflict' (changed since the caller read it: started by the sweep
-- or cancelled meanwhile, so the caller reads it again and ends it or answers as it is), 'duplicate'.
CREATE OR REPLACE FUNCTION herald_activity_cancel(p_partner uuid, p_key text, p_body_hash text, p_response text,
                                                  p_id uuid, p_version integer, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_activity record;
    v_refusal  text;
BEGIN
    SELECT a.status, a.version INTO v_activity
      FROM live_activities a WHERE a.id = p_id AND a.partner_id = p_partner FOR UPDATE;
    -- A row no longer scheduled has a newer version than the caller read: a conflict, never 'ended'.
    v_refusal := herald_change_refusal(FOUND, true, v_activity.version = p_version AND v_activity.status = 'scheduled',
                                       p_partner, p_key, p_body_hash, p_id, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET status = 'cancelled', version = version + 1, updated_at = p_now, ended_at = p_now, held_start = NULL
     WHERE id = p_id;
    PERFORM herald_activity_event(ARRAY[p_id], 'end', 'cancel', ARRAY[NULL::text], NULL, ARRAY[NULL::text], NULL,
                                  ARRAY[5::smallint], ARRAY[p_now], p_key => p_key);
    RETURN 'cancelled';
END
$$;
