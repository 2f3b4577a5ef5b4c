-- Records an idempotency key for a change of an activity; false when another request holds it.
CREATE OR REPLACE FUNCTION herald_activity_claim_key(p_partner uuid, p_key text, p_body_hash text, p_request uuid,
                                          p_response text, p_status smallint, p_now timestamptz)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_taken integer;
BEGIN
    IF p_key IS NULL THEN
        RETURN true;
    END IF;
    INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at, status)
    VALUES (p_partner, p_key, p_body_hash, p_request, p_response, p_now, p_status)
    ON CONFLICT (partner_id, key) DO UPDATE
       SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id, response = EXCLUDED.response,
           created_at = EXCLUDED.created_at, status = EXCLUDED.status
     WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours';
    GET DIAGNOSTICS v_taken = ROW_COUNT;
    RETURN v_taken = 1;
END
$$;
