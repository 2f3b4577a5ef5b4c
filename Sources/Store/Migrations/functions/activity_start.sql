-- Starts a Live Activity: checks the key and the budgets the host's mini-apps share, replaces the
-- recipient's previous activity for the mini-app, records the activity and its targets, and queues the
-- start's deliveries (functions/activity_event.sql).
--
-- `result` is 'started'; 'duplicate' when another request holds the idempotency key; or 'refused' with `reason`
-- and `retry_after` of the start budgets (functions/activity_start_budget.sql). A refusal writes nothing.
-- `replaced_priority` is the apns-priority of the end of `p_old` when this start replaced it
-- (functions/activity_replace.sql). With the audit rows of the replacement's end and of the start
-- (sql/033_live_activity_events.sql): `p_alert_title` and `p_ttl_seconds` are the partner's, when given.
-- `p_channel`: the broadcast channel the activity follows (sql/034_live_channels.sql), for a start from one.
CREATE OR REPLACE FUNCTION herald_activity_start(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamptz,
    p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb,
    p_expires timestamptz, p_timestamp bigint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint,
    p_devices text[], p_services text[], p_apns_start text, p_fcm_start text,
    p_old uuid, p_old_apns_end text, p_old_fcm_end text, p_old_timestamp bigint, p_relevance smallint,
    p_max_active integer, p_starts_per_user integer, p_starts_per_app integer, p_alerted_limit integer,
    p_alert_title text DEFAULT NULL, p_ttl_seconds integer DEFAULT NULL, p_channel uuid DEFAULT NULL,
    OUT result text, OUT reason text, OUT retry_after integer, OUT replaced_priority smallint)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_budget record;
BEGIN
    -- Starts for one user, from every intake and mini-app, one at a time: each counts the ones before it
    -- (the statements below see what the previous holder committed) and sees the activity it replaces.
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_activity_user:' || p_user, 0));

    -- A replay outranks the budget: a key another request stored is answered with its response.
    IF p_key IS NOT NULL AND EXISTS (SELECT 1 FROM idempotency_keys k
                                      WHERE k.partner_id = p_partner AND k.key = p_key
                                        AND k.created_at > p_now - interval '24 hours') THEN
        result := 'duplicate';
        RETURN;
    END IF;

    v_budget := herald_activity_start_budget(p_user, p_mini_app, p_now, p_max_active, p_starts_per_user,
                                             p_starts_per_app);
    IF v_budget.reason IS NOT NULL THEN
        result := 'refused';
        reason := v_budget.reason;
        retry_after := v_budget.retry_after;
        RETURN;
    END IF;

    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        result := 'duplicate';
        RETURN;
    END IF;

    -- The active activity of the same user and mini-app is replaced: with the end the intake rendered for it
    -- (dismissed at once), or, should another start have replaced that one since the intake read it, with the
    -- stored TTL end of whichever is active.
    replaced_priority := herald_activity_replace(p_user, p_mini_app, p_now, p_old, p_old_apns_end, p_old_fcm_end,
                                                 p_old_timestamp, p_alerted_limit);

    INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                 last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                 fcm_end_payload, end_timestamp, relevance_score, channel_id)
    VALUES (p_id, p_partner, p_mini_app, p_user, p_template, p_attributes, p_state, p_start_alert, p_timestamp,
            p_now, p_now, p_expires, p_apns_end, p_fcm_end, p_end_timestamp, p_relevance, p_channel);
    INSERT INTO live_activity_targets (activity_id, device_id, service)
    SELECT p_id, x.device_id, x.service FROM unnest(p_devices, p_services) AS x (device_id, service);
    -- Each device's start, in the environment its device row holds, due from `p_now` (the activity's creation).
    PERFORM herald_activity_event(ARRAY[p_id], 'start', 'start', ARRAY[p_apns_start], NULL, ARRAY[p_fcm_start], NULL,
                                  ARRAY[10::smallint], ARRAY[p_expires], p_key => p_key,
                                  p_alert_title => p_alert_title, p_ttl_seconds => p_ttl_seconds);
    result := 'started';
END
$$;
