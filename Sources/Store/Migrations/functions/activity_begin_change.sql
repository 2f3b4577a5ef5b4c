-- The checks every change of an activity makes, under the activity's row lock, then its Idempotency-Key
-- (functions/change_refusal.sql). Returns NULL when the change may go ahead, else why not: 'not_found' (no such
-- activity of this partner), 'ended' (ended, replaced, expired, or past its TTL before the sweep), 'conflict'
-- (changed since the caller read it), 'duplicate' (another request holds the key).
CREATE OR REPLACE FUNCTION herald_activity_begin_change(p_partner uuid, p_id uuid, p_version integer, p_key text,
                                             p_body_hash text, p_response text, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_activity record;
BEGIN
    SELECT a.status, a.version, a.expires_at INTO v_activity
      FROM live_activities a WHERE a.id = p_id AND a.partner_id = p_partner FOR UPDATE;
    RETURN herald_change_refusal(FOUND, v_activity.status = 'active' AND v_activity.expires_at > now(),
                                 v_activity.version = p_version, p_partner, p_key, p_body_hash, p_id, p_response,
                                 p_now);
END
$$;
