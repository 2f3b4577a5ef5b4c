-- Starts a Live Activity: checks the key, replaces the recipient's previous activity for the
-- mini-app, records the activity and its targets, and queues the start's deliveries (time-ordered ids),
-- with the audit rows of the replacement's end and of the start (sql/033_live_activity_events.sql):
-- `p_alert_title` and `p_ttl_seconds` are the partner's, when given.
CREATE OR REPLACE FUNCTION herald_activity_start(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamptz,
    p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb,
    p_expires timestamptz, p_timestamp bigint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint,
    p_devices text[], p_services text[], p_environments text[], p_apns_start text, p_fcm_start text,
    p_old uuid, p_old_apns_end text, p_old_fcm_end text, p_old_timestamp bigint, p_alert_title text DEFAULT NULL,
    p_ttl_seconds integer DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_old record;
    v_event uuid;
BEGIN
    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    -- Starts for one user and mini-app one at a time: each sees the one before it as the active one.
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_activity:' || p_user || '/' || p_mini_app, 0));

    UPDATE live_activities a
       SET status = 'replaced', ended_at = p_now, updated_at = p_now, version = a.version + 1,
           dismiss_at = CASE WHEN a.id = p_old THEN p_now ELSE a.expires_at END,
           apns_end_payload = CASE WHEN a.id = p_old THEN p_old_apns_end ELSE a.apns_end_payload END,
           fcm_end_payload = CASE WHEN a.id = p_old THEN p_old_fcm_end ELSE a.fcm_end_payload END,
           end_timestamp = CASE WHEN a.id = p_old THEN p_old_timestamp ELSE a.end_timestamp END,
           last_timestamp = CASE WHEN a.id = p_old THEN p_old_timestamp ELSE a.end_timestamp END
     WHERE a.user_id = p_user AND a.mini_app_id = p_mini_app AND a.status = 'active'
    RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at, a.partner_id, a.state INTO v_old;
    IF v_old.id IS NOT NULL THEN
        v_event := herald_uuid_v7();
        INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, devices_apns,
                                          devices_fcm)
        SELECT v_event, herald_uuid_v7_time(v_event), v_old.id, v_old.partner_id, 'replace-end', v_old.state,
               d.o_apns, d.o_fcm
          FROM herald_activity_dispatch(ARRAY[v_old.id], 'end', ARRAY[v_old.apns_end_payload], NULL,
                                        ARRAY[v_old.fcm_end_payload], NULL, ARRAY[5::smallint],
                                        ARRAY[v_old.created_at + interval '12 hours'], p_events => ARRAY[v_event]) d;
    END IF;

    INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                 last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                 fcm_end_payload, end_timestamp)
    VALUES (p_id, p_partner, p_mini_app, p_user, p_template, p_attributes, p_state, p_start_alert, p_timestamp,
            p_now, p_now, p_expires, p_apns_end, p_fcm_end, p_end_timestamp);
    INSERT INTO live_activity_targets (activity_id, device_id, service)
    SELECT p_id, x.device_id, x.service FROM unnest(p_devices, p_services) AS x (device_id, service);
    v_event := herald_uuid_v7();
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, alert_title, ttl_seconds,
                                      idempotency_key, devices_apns, devices_fcm)
    SELECT v_event, herald_uuid_v7_time(v_event), p_id, p_partner, 'start', p_state, p_alert_title, p_ttl_seconds,
           p_key, (count(*) FILTER (WHERE x.service = 'apns'))::integer,
           (count(*) FILTER (WHERE x.service = 'fcm'))::integer
      FROM unnest(p_services) AS x (service);
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                            environment, payload, available_at, expires_at, activity_id, activity_event, priority,
                            activity_event_id)
    SELECT herald_uuid_v7(), p_id, p_now, p_partner, 0, x.service, p_user, x.device_id, x.environment,
           CASE x.service WHEN 'apns' THEN p_apns_start ELSE p_fcm_start END, p_now, p_expires, p_id, 'start',
           CASE x.service WHEN 'apns' THEN 10::smallint END, v_event
      FROM unnest(p_devices, p_services, p_environments) AS x (device_id, service, environment);
    RETURN 'started';
END
$$;
