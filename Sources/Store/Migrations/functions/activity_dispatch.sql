-- Queues an activity event's deliveries (start, update or end) to its devices' tokens, with
-- time-ordered ids, and records each device's held event where no update token is known yet.
CREATE OR REPLACE FUNCTION herald_activity_dispatch(p_ids uuid[], p_event text, p_apns text[], p_apns_start text[],
                                         p_fcm text[], p_fcm_start text[], p_priorities smallint[],
                                         p_expires timestamptz[], p_device text DEFAULT NULL,
                                         p_lane smallint DEFAULT 0)
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_written integer;
BEGIN
    WITH x AS (
        SELECT * FROM unnest(p_ids, p_apns, coalesce(p_apns_start, array_fill(NULL::text, ARRAY[cardinality(p_ids)])),
                             p_fcm, coalesce(p_fcm_start, array_fill(NULL::text, ARRAY[cardinality(p_ids)])),
                             p_priorities, p_expires)
               AS x (id, apns, apns_start, fcm, fcm_start, priority, expires)
    ), t AS (
        SELECT t.activity_id, t.device_id, t.service,
               (t.update_token IS NOT NULL AND t.update_token_invalidated_at IS NULL) AS has_token,
               x.apns, x.apns_start, x.fcm, x.fcm_start, x.priority, x.expires
          FROM x JOIN live_activity_targets t ON t.activity_id = x.id
         WHERE (p_device IS NULL OR t.device_id = p_device)
           -- A device where the user dismissed or ended the activity, or where the start created nothing,
           -- gets nothing more (functions/activity_device_state.sql).
           AND (t.device_state IS NULL OR t.device_state IN ('active', 'stale'))
    ), pend AS (
        -- Waits for a claim in progress; a row it leased is no longer pending here.
        SELECT d.id, d.activity_id, d.device_id, d.activity_event
          FROM deliveries d JOIN t ON d.activity_id = t.activity_id AND d.device_id = t.device_id
         WHERE d.state = 'pending'
           FOR UPDATE OF d
    ), moot AS (
        DELETE FROM deliveries d USING pend p
         WHERE p_event = 'end' AND p.activity_event = 'start' AND d.id = p.id
        RETURNING d.*
    ), moot_history AS (
        INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                      attempts, last_error, created_at, finished_at, activity_event)
        SELECT id, request_id, partner_id, lane, service, user_id, device_id, 'superseded', attempts,
               'ended_before_start_sent', created_at, now(), activity_event
          FROM moot
    ), restarted AS (
        UPDATE deliveries d
           SET payload = CASE d.service WHEN 'apns' THEN t.apns_start ELSE t.fcm_start END, expires_at = t.expires
          FROM pend p JOIN t ON t.activity_id = p.activity_id AND t.device_id = p.device_id
         WHERE p_event = 'update' AND p.activity_event = 'start' AND d.id = p.id
        RETURNING d.id
    ), rewritten AS (
        UPDATE deliveries d
           SET payload = CASE d.service WHEN 'apns' THEN t.apns ELSE t.fcm END, activity_event = p_event,
               priority = CASE d.service WHEN 'apns' THEN t.priority END, expires_at = t.expires
          FROM pend p JOIN t ON t.activity_id = p.activity_id AND t.device_id = p.device_id
         WHERE p.activity_event <> 'start' AND d.id = p.id AND (t.service = 'fcm' OR t.has_token)
        RETURNING d.id
    ), fresh AS (
        INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                environment, payload, available_at, expires_at, activity_id, activity_event, priority)
        SELECT herald_uuid_v7(), a.id, a.created_at, a.partner_id, p_lane, t.service, a.user_id, t.device_id,
               v.environment, CASE t.service WHEN 'apns' THEN t.apns ELSE t.fcm END, now(), t.expires, a.id,
               p_event, CASE t.service WHEN 'apns' THEN t.priority END
          FROM t JOIN live_activities a ON a.id = t.activity_id
          JOIN devices v ON v.user_id = a.user_id AND v.device_id = t.device_id
         WHERE (t.service = 'fcm' OR t.has_token)
           AND NOT EXISTS (SELECT 1 FROM pend p WHERE p.activity_id = t.activity_id AND p.device_id = t.device_id)
        RETURNING 1
    ), held AS (
        UPDATE live_activity_targets lt
           SET held_event = CASE WHEN p_event = 'end' OR lt.held_event = 'end' THEN 'end' ELSE 'update' END
          FROM t
         WHERE lt.activity_id = t.activity_id AND lt.device_id = t.device_id AND t.service = 'apns' AND NOT t.has_token
           AND NOT EXISTS (SELECT 1 FROM pend p WHERE p.activity_id = t.activity_id AND p.device_id = t.device_id
                                                  AND p.activity_event = 'start')
    )
    SELECT (SELECT count(*) FROM restarted) + (SELECT count(*) FROM rewritten) + (SELECT count(*) FROM fresh)
      INTO v_written;
    RETURN v_written;
END
$$;
