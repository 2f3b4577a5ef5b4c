-- A partner's new broadcast channel (sql/034_live_channels.sql), its audit row (functions/channel_event.sql) and
-- its Idempotency-Key, in one transaction. Returns 'opened', 'duplicate' (another request holds the key; nothing
-- written) or 'too_many_channels' (the mini-app already has `p_max_open` channels opening or open: the host app's
-- 10,000 APNs channels are shared by every mini-app). The mini-app's advisory lock makes the count exact under
-- concurrent opens from several intakes.
CREATE OR REPLACE FUNCTION herald_channel_open(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamptz, p_mini_app text,
    p_template text, p_attributes jsonb, p_state jsonb, p_expires timestamptz, p_timestamp bigint,
    p_relevance smallint, p_end_apns text, p_ttl_given integer, p_max_open integer)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_open integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_live_channels:' || p_mini_app, 0));
    SELECT count(*) INTO v_open FROM live_channels c
     WHERE c.mini_app_id = p_mini_app AND c.status IN ('opening', 'open');
    IF v_open >= p_max_open THEN
        RETURN 'too_many_channels';
    END IF;
    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    INSERT INTO live_channels (id, partner_id, mini_app_id, template, attributes, state, last_timestamp,
                               relevance_score, apns_end_payload, created_at, updated_at, expires_at, next_at)
    VALUES (p_id, p_partner, p_mini_app, p_template, p_attributes, p_state, p_timestamp, p_relevance, p_end_apns,
            p_now, p_now, p_expires, p_now);
    PERFORM herald_channel_event(ARRAY[p_id], 'open', p_now, p_key => p_key, p_ttl_seconds => p_ttl_given);
    RETURN 'opened';
END
$$;
