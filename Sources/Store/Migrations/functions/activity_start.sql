-- Starts a Live Activity: checks the key and the budgets the host's mini-apps share, replaces the
-- recipient's previous activity for the mini-app, records the activity and its targets, and queues the
-- start's deliveries (functions/activity_event.sql).
--
-- `result` is 'started'; 'duplicate' when another request holds the idempotency key; or 'refused' with
-- `reason` 'active_per_user' (the user has `p_max_active` active activities of other mini-apps: the one
-- this start replaces is not counted twice), 'starts_per_user' or 'starts_per_user_app' (the hour's
-- starts, replacements included, are spent; `retry_after` is the seconds until the start that must
-- leave the window does). A refusal writes nothing. `replaced_priority` is the apns-priority of the end
-- of `p_old` when this start replaced it: 10 (it leaves the screen at once), paid from that activity's
-- alerted budget, or 5 once that budget is spent. With the audit rows of the replacement's end and of the
-- start (sql/033_live_activity_events.sql): `p_alert_title` and `p_ttl_seconds` are the partner's, when given.
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
    v_active      integer;
    v_user_starts timestamptz[];
    v_app_starts  timestamptz[];
    v_user_wait   integer := 0;
    v_app_wait    integer := 0;
    v_old         record;
    v_spent       timestamptz[];
    v_priority    smallint := 5;
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

    -- Active activities of the user's other mini-apps (live_activities_one_active); one past its TTL that
    -- the sweep has not ended yet no longer counts.
    SELECT count(*) INTO v_active
      FROM live_activities a
     WHERE a.user_id = p_user AND a.status = 'active' AND a.mini_app_id <> p_mini_app AND a.expires_at > p_now;
    IF v_active >= p_max_active THEN
        result := 'refused';
        reason := 'active_per_user';
        RETURN;
    END IF;

    -- The user's starts of the last hour, oldest first (live_activities_user_starts).
    SELECT coalesce(array_agg(a.created_at ORDER BY a.created_at), '{}'),
           coalesce(array_agg(a.created_at ORDER BY a.created_at) FILTER (WHERE a.mini_app_id = p_mini_app), '{}')
      INTO v_user_starts, v_app_starts
      FROM live_activities a
     WHERE a.user_id = p_user AND a.created_at > p_now - interval '1 hour';
    -- Over a limit, the count falls below it once its (count - limit + 1)-th oldest start leaves the
    -- window (the oldest, unless the limit was lowered since).
    IF cardinality(v_user_starts) >= p_starts_per_user THEN
        v_user_wait := greatest(1, ceil(extract(epoch FROM
            v_user_starts[cardinality(v_user_starts) - p_starts_per_user + 1] + interval '1 hour' - p_now))::integer);
    END IF;
    IF cardinality(v_app_starts) >= p_starts_per_app THEN
        v_app_wait := greatest(1, ceil(extract(epoch FROM
            v_app_starts[cardinality(v_app_starts) - p_starts_per_app + 1] + interval '1 hour' - p_now))::integer);
    END IF;
    IF v_user_wait > 0 OR v_app_wait > 0 THEN
        result := 'refused';
        reason := CASE WHEN v_app_wait >= v_user_wait THEN 'starts_per_user_app' ELSE 'starts_per_user' END;
        retry_after := greatest(v_user_wait, v_app_wait);
        RETURN;
    END IF;

    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        result := 'duplicate';
        RETURN;
    END IF;

    -- The active activity of the same user and mini-app is replaced: with the end the intake rendered for
    -- it (dismissed at once), or, should another start have replaced that one since the intake read it,
    -- with the stored TTL end of whichever is active.
    SELECT a.id, a.alerted_at INTO v_old
      FROM live_activities a
     WHERE a.user_id = p_user AND a.mini_app_id = p_mini_app AND a.status = 'active'
       FOR UPDATE;
    IF FOUND THEN
        IF v_old.id = p_old THEN
            v_spent := herald_activity_alert_spend(v_old.alerted_at, p_now, p_alerted_limit);
            v_priority := CASE WHEN v_spent IS NULL THEN 5 ELSE 10 END;
            replaced_priority := v_priority;
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
    END IF;

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
