-- A partner's update (`p_kind` 'update') or end ('end') of a broadcast channel, with its audit row and its
-- Idempotency-Key. The change becomes the channel's newest (`apns_payload`): a worker broadcasts it, and a
-- change not broadcast yet is replaced, not queued (its audit row then ends 'superseded'). Returns 'updated',
-- 'ended_now', or why not: 'not_found' (no such channel of this partner), 'ended' (ended, failed or past its
-- TTL), 'conflict' (changed since the caller read version `p_version`), 'duplicate' (another request holds the
-- key), or 'updated_silent': an alerted update (`p_priority` 10) over the channel's alerted budget
-- (`p_alerted_limit` an hour, functions/activity_alert_spend.sql, as for an activity) goes out as the silent
-- variant the intake rendered beside it (`p_apns_silent`, priority 5), answered with `p_response_silent`. An end
-- before APNs made the channel broadcasts nothing: the worker deletes whatever channel a create in flight makes.
CREATE OR REPLACE FUNCTION herald_channel_change(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_kind text, p_state jsonb, p_timestamp bigint, p_apns text, p_priority smallint,
    p_end_apns text, p_expires timestamptz, p_relevance smallint, p_delete_at timestamptz,
    p_patch jsonb DEFAULT NULL, p_alert_title text DEFAULT NULL, p_ttl_given integer DEFAULT NULL,
    p_dismiss_given timestamptz DEFAULT NULL, p_alerted_limit integer DEFAULT NULL, p_apns_silent text DEFAULT NULL,
    p_response_silent text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_channel record;
    v_refusal text;
    v_spent timestamptz[];
    v_silent boolean := false;
    v_apns text := p_apns;
    v_priority smallint := p_priority;
BEGIN
    SELECT c.status, c.version, c.expires_at, c.alerted_at INTO v_channel
      FROM live_channels c WHERE c.id = p_id AND c.partner_id = p_partner FOR UPDATE;
    v_refusal := herald_change_refusal(FOUND, v_channel.status IN ('opening', 'open') AND v_channel.expires_at > p_now,
                                       v_channel.version = p_version, p_partner, p_key, p_body_hash, p_id, p_response,
                                       p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    v_spent := v_channel.alerted_at;
    IF p_kind = 'update' AND p_priority = 10 THEN
        v_spent := herald_activity_alert_spend(v_channel.alerted_at, p_now, p_alerted_limit);
        IF v_spent IS NULL THEN
            v_silent := true;
            v_apns := p_apns_silent;
            v_priority := 5;
            v_spent := v_channel.alerted_at;
            IF p_key IS NOT NULL THEN
                UPDATE idempotency_keys SET response = p_response_silent WHERE partner_id = p_partner AND key = p_key;
            END IF;
        END IF;
    END IF;
    PERFORM herald_channel_event(ARRAY[p_id], p_kind, p_now, p_state, p_timestamp, v_apns, v_priority, p_end_apns,
                                 p_expires, p_relevance, v_spent, p_delete_at, p_patch, p_key, p_alert_title,
                                 p_ttl_given, p_dismiss_given);
    IF p_kind = 'end' THEN
        -- The users' activities started from the channel end with its end broadcast.
        UPDATE live_activities a
           SET status = 'ended', ended_at = p_now, updated_at = p_now, dismiss_at = p_delete_at, version = a.version + 1
         WHERE a.channel_id = p_id AND a.status = 'active';
    ELSE
        -- The users' activities started from the channel follow its TTL.
        UPDATE live_activities a SET expires_at = p_expires, updated_at = p_now
         WHERE a.channel_id = p_id AND a.status = 'active' AND a.expires_at <> p_expires;
    END IF;
    RETURN CASE WHEN p_kind = 'end' THEN 'ended_now' WHEN v_silent THEN 'updated_silent' ELSE 'updated' END;
END
$$;
