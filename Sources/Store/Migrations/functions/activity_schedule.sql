-- Holds a Live Activity start with `startAt` (sql/062_scheduled_starts.sql): claims the key and records the
-- activity as 'scheduled', due at `p_start_at`, with what its start needs when it comes due (`held_start`: the start
-- payloads and the devices the intake rendered and found, the intake's limits, the partner's audit inputs) and its
-- audit row of kind 'schedule'. Nothing is queued and no budget is spent: the workers' sweep
-- (functions/activity_start_due.sql) checks the session, the opt-out, the quiet hours and the budgets at the start's
-- time and sends it then. `created_at` is the planned start until the start is sent (then the moment it was), and
-- `p_expires` the TTL counted from it. Returns 'scheduled', or 'duplicate' when another request holds the key.
CREATE OR REPLACE FUNCTION herald_activity_schedule(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamptz,
    p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb,
    p_start_at timestamptz, p_expires timestamptz, p_timestamp bigint, p_apns_end text, p_fcm_end text,
    p_end_timestamp bigint, p_devices text[], p_services text[], p_apns_start text, p_fcm_start text,
    p_relevance smallint, p_session_days integer, p_max_active integer, p_starts_per_user integer,
    p_starts_per_app integer, p_alerted_limit integer, p_alert_title text, p_ttl_seconds integer)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                 status, last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                 fcm_end_payload, end_timestamp, relevance_score, start_at, held_start)
    VALUES (p_id, p_partner, p_mini_app, p_user, p_template, p_attributes, p_state, p_start_alert, 'scheduled',
            p_timestamp, p_start_at, p_now, p_expires, p_apns_end, p_fcm_end, p_end_timestamp, p_relevance, p_start_at,
            jsonb_build_object('apns', p_apns_start, 'fcm', p_fcm_start, 'devices', to_jsonb(p_devices),
                               'services', to_jsonb(p_services), 'sessionDays', p_session_days,
                               'maxActive', p_max_active, 'startsPerUser', p_starts_per_user,
                               'startsPerApp', p_starts_per_app, 'alertedLimit', p_alerted_limit, 'key', p_key,
                               'alertTitle', p_alert_title, 'ttlSeconds', p_ttl_seconds));
    -- The audit row only: the activity has no target yet, so the event reaches no device.
    PERFORM herald_activity_event(ARRAY[p_id], 'start', 'schedule', ARRAY[NULL::text], NULL, ARRAY[NULL::text], NULL,
                                  ARRAY[10::smallint], ARRAY[p_expires], p_key => p_key,
                                  p_alert_title => p_alert_title, p_ttl_seconds => p_ttl_seconds);
    RETURN 'scheduled';
END
$$;
