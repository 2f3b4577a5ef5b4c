-- The checks every change of an activity makes, under the activity's row lock, then its Idempotency-Key.
-- Returns NULL when the change may go ahead, else why not: 'not_found' (no such activity of this
-- partner), 'ended' (ended, replaced, expired, or past its TTL before the sweep), 'conflict' (changed
-- since the caller read it), 'duplicate' (another request holds the key).
CREATE OR REPLACE FUNCTION herald_activity_begin_change(p_partner uuid, p_id uuid, p_version integer, p_key text,
                                             p_body_hash text, p_response text, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_activity record;
BEGIN
    SELECT a.status, a.version, a.expires_at INTO v_activity
      FROM live_activities a WHERE a.id = p_id AND a.partner_id = p_partner FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF v_activity.status <> 'active' OR v_activity.expires_at <= now() THEN
        RETURN 'ended';
    ELSIF v_activity.version <> p_version THEN
        RETURN 'conflict';
    ELSIF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 200::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    RETURN NULL;
END
$$;
