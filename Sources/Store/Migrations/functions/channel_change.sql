-- A partner's update (`p_kind` 'update') or end ('end') of a broadcast channel, with its audit row and its
-- Idempotency-Key. The change becomes the channel's newest (`apns_payload`): a worker broadcasts it, and a
-- change not broadcast yet is replaced, not queued (its audit row then ends 'superseded'). Returns 'updated',
-- 'ended_now', or why not: 'not_found' (no such channel of this partner), 'ended' (ended, failed or past its
-- TTL), 'conflict' (changed since the caller read version `p_version`), 'duplicate' (another request holds the
-- key). An end before APNs made the channel broadcasts nothing: the worker deletes whatever channel a create
-- in flight makes.
CREATE OR REPLACE FUNCTION herald_channel_change(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_kind text, p_state jsonb, p_timestamp bigint, p_apns text, p_priority smallint,
    p_end_apns text, p_expires timestamptz, p_relevance smallint, p_delete_at timestamptz,
    p_patch jsonb DEFAULT NULL, p_alert_title text DEFAULT NULL, p_ttl_given integer DEFAULT NULL,
    p_dismiss_given timestamptz DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_channel record;
    v_event uuid;
    v_unmade boolean;
BEGIN
    SELECT c.status, c.version, c.expires_at, c.apns_channel_id INTO v_channel
      FROM live_channels c WHERE c.id = p_id AND c.partner_id = p_partner FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF v_channel.status NOT IN ('opening', 'open') OR v_channel.expires_at <= p_now THEN
        RETURN 'ended';
    ELSIF v_channel.version <> p_version THEN
        RETURN 'conflict';
    ELSIF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 200::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    -- Before APNs made the channel no phone can follow it: an end has no one to tell.
    v_unmade := v_channel.apns_channel_id IS NULL;
    IF p_kind = 'end' THEN
        UPDATE live_channels
           SET status = 'ending', state = p_state, version = version + 1, last_timestamp = p_timestamp,
               apns_payload = p_apns, apns_priority = p_priority, updated_at = p_now, ended_at = p_now,
               delete_at = p_delete_at, next_at = p_now,
               sent_version = CASE WHEN v_unmade THEN version + 1 ELSE sent_version END
         WHERE id = p_id;
        -- The users' activities started from the channel end with its end broadcast.
        UPDATE live_activities a
           SET status = 'ended', ended_at = p_now, updated_at = p_now, dismiss_at = p_delete_at, version = a.version + 1
         WHERE a.channel_id = p_id AND a.status = 'active';
    ELSE
        UPDATE live_channels
           SET state = p_state, version = version + 1, last_timestamp = p_timestamp, apns_payload = p_apns,
               apns_priority = p_priority, apns_end_payload = p_end_apns, expires_at = p_expires,
               relevance_score = p_relevance, updated_at = p_now, next_at = p_now
         WHERE id = p_id;
    END IF;
    v_event := herald_uuid_v7();
    INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, state, alert_title, ttl_seconds,
                                     dismiss_at, idempotency_key, version, outcome, finished_at)
    VALUES (v_event, herald_uuid_v7_time(v_event), p_id, p_partner, p_kind,
            CASE WHEN p_kind = 'end' THEN p_state ELSE p_patch END, p_alert_title, p_ttl_given, p_dismiss_given,
            p_key, p_version + 1,
            CASE WHEN v_unmade AND p_kind = 'end' THEN 'not_sent' ELSE 'pending' END,
            CASE WHEN v_unmade AND p_kind = 'end' THEN p_now END);
    PERFORM pg_notify('herald_channels', '');
    RETURN CASE WHEN p_kind = 'end' THEN 'ended_now' ELSE 'updated' END;
END
$$;
