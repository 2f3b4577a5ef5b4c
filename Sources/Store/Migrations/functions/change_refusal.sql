-- Why a partner's change of an activity or a broadcast channel, whose row the caller holds locked, may not go ahead,
-- in the order the partner is told: 'not_found' (`p_found` false: no such row of this partner), 'ended' (`p_live`
-- false: ended, or past its TTL), 'conflict' (`p_current` false: changed since the caller read it) or 'duplicate'
-- (another request holds the Idempotency-Key). NULL when it may: the key is then the change's. It plans no statement
-- of its own (herald_activity_claim_key carries its planner settings), so it sets none.
CREATE OR REPLACE FUNCTION herald_change_refusal(p_found boolean, p_live boolean, p_current boolean, p_partner uuid,
                                                 p_key text, p_body_hash text, p_id uuid, p_response text,
                                                 p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF NOT p_found THEN
        RETURN 'not_found';
    ELSIF NOT p_live THEN
        RETURN 'ended';
    ELSIF NOT p_current THEN
        RETURN 'conflict';
    ELSIF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 200::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    RETURN NULL;
END
$$;
