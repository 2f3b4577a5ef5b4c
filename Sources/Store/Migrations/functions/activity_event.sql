-- Queues one Live Activity event per activity of `p_ids` (`p_event` 'start', 'update' or 'end'): its deliveries to
-- the activity's devices, time-ordered ids, at each activity's payloads, priority and expiry, in lane `p_lane`
-- (`p_device`: one device only), and its audit row (sql/033_live_activity_events.sql) of kind `p_kind` with the
-- devices it was queued or held for, by service. Every path that sends an activity event writes it here: a start,
-- an update, an end, the end of the activity a start replaces, the TTL sweep's and a revocation's ends
-- (functions/activity_ends_dispatch.sql), and a held event a late update token releases (`p_kind` NULL: the event
-- and its audit row exist already, `p_events` names them, and the audit counted the device when it was held).
--
-- A start reaches every device of the activity's targets; an update or end reaches an Android phone, and an iPhone
-- whose update token is known, and is held for an iPhone that has none yet (the device's held event). A pending row
-- or a held event of an older event that this one takes over counts `superseded` for that older event, as does a
-- start made moot by an end (a device whose pending start an end made moot gets nothing and is not counted).
-- The audit row carries the activity's partner and, unless `p_states` gives each one (an update records the
-- partner's patch), its state after the change; `p_key`, `p_alert_title`, `p_ttl_seconds` and `p_dismiss` as the
-- partner gave them.
CREATE OR REPLACE FUNCTION herald_activity_event(
    p_ids uuid[], p_event text, p_kind text, p_apns text[], p_apns_start text[], p_fcm text[], p_fcm_start text[],
    p_priorities smallint[], p_expires timestamptz[], p_lane smallint DEFAULT 0, p_device text DEFAULT NULL,
    p_events uuid[] DEFAULT NULL, p_states jsonb[] DEFAULT NULL, p_key text DEFAULT NULL,
    p_alert_title text DEFAULT NULL, p_ttl_seconds integer DEFAULT NULL, p_dismiss timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_superseded uuid[];
    v_activities uuid[];
    v_apns       integer[];
    v_fcm        integer[];
    v_events     uuid[] := p_events;
BEGIN
    IF p_kind IS NOT NULL THEN
        -- In plpgsql: a sql function (herald_uuid_v7) is planned again at every run of a statement that calls it,
        -- and once a transaction in a plpgsql expression.
        FOR i IN 1..cardinality(p_ids) LOOP
            v_events[i] := herald_uuid_v7();
        END LOOP;
    END IF;
    WITH x AS (
        SELECT * FROM unnest(p_ids, v_events, p_apns,
                             coalesce(p_apns_start, array_fill(NULL::text, ARRAY[cardinality(p_ids)])),
                             p_fcm, coalesce(p_fcm_start, array_fill(NULL::text, ARRAY[cardinality(p_ids)])),
                             p_priorities, p_expires)
               AS x (id, event_id, apns, apns_start, fcm, fcm_start, priority, expires)
    ), t AS (
        SELECT t.activity_id, t.device_id, t.service, t.held_event, t.held_event_id,
               (t.update_token IS NOT NULL AND t.update_token_invalidated_at IS NULL) AS has_token,
               x.event_id, x.apns, x.apns_start, x.fcm, x.fcm_start, x.priority, x.expires
          FROM x JOIN live_activity_targets t ON t.activity_id = x.id
         WHERE (p_device IS NULL OR t.device_id = p_device)
           -- A device where the user dismissed or ended the activity, or where the start created nothing,
           -- gets nothing more; one that shows it unpromoted still does (functions/activity_device_state.sql).
           AND (t.device_state IS NULL OR t.device_state IN ('active', 'stale', 'not_promoted'))
    ), pend AS (
        -- Waits for a claim in progress; a row it leased is no longer pending here.
        SELECT d.id, d.activity_id, d.device_id, d.activity_event, d.activity_event_id
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
           SET payload = CASE d.service WHEN 'apns' THEN t.apns_start ELSE t.fcm_start END, expires_at = t.expires,
               activity_event_id = t.event_id
          FROM pend p JOIN t ON t.activity_id = p.activity_id AND t.device_id = p.device_id
         WHERE p_event = 'update' AND p.activity_event = 'start' AND d.id = p.id
        RETURNING d.activity_id, d.service,
                  CASE WHEN p.activity_event_id IS DISTINCT FROM t.event_id THEN p.activity_event_id END AS superseded
    ), rewritten AS (
        UPDATE deliveries d
           SET payload = CASE d.service WHEN 'apns' THEN t.apns ELSE t.fcm END, activity_event = p_event,
               priority = CASE d.service WHEN 'apns' THEN t.priority END, expires_at = t.expires,
               activity_event_id = t.event_id
          FROM pend p JOIN t ON t.activity_id = p.activity_id AND t.device_id = p.device_id
         WHERE p.activity_event <> 'start' AND d.id = p.id AND (t.service = 'fcm' OR t.has_token)
        RETURNING d.activity_id, d.service,
                  CASE WHEN p.activity_event_id IS DISTINCT FROM t.event_id THEN p.activity_event_id END AS superseded
    ), fresh AS (
        INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                environment, payload, available_at, expires_at, activity_id, activity_event, priority,
                                activity_event_id)
        SELECT herald_uuid_v7(), a.id, a.created_at, a.partner_id, p_lane, t.service, a.user_id, t.device_id,
               v.environment, CASE t.service WHEN 'apns' THEN t.apns ELSE t.fcm END,
               -- A start is due from its activity's creation, the time the caller gave.
               CASE WHEN p_event = 'start' THEN a.created_at ELSE now() END, t.expires, a.id,
               p_event, CASE t.service WHEN 'apns' THEN t.priority END, t.event_id
          FROM t JOIN live_activities a ON a.id = t.activity_id
          JOIN devices v ON v.user_id = a.user_id AND v.device_id = t.device_id
         WHERE (p_event = 'start' OR t.service = 'fcm' OR t.has_token)
           AND NOT EXISTS (SELECT 1 FROM pend p WHERE p.activity_id = t.activity_id AND p.device_id = t.device_id)
        RETURNING activity_id, service
    ), held AS (
        -- An end outranks an update: an update never takes the place of a held end. A start needs no update token.
        UPDATE live_activity_targets lt
           SET held_event = CASE WHEN p_event = 'end' OR lt.held_event = 'end' THEN 'end' ELSE 'update' END,
               held_event_id = CASE WHEN p_event = 'end' OR lt.held_event IS DISTINCT FROM 'end' THEN t.event_id
                                    ELSE lt.held_event_id END
          FROM t
         WHERE lt.activity_id = t.activity_id AND lt.device_id = t.device_id AND t.service = 'apns' AND NOT t.has_token
           AND p_event <> 'start'
           AND NOT EXISTS (SELECT 1 FROM pend p WHERE p.activity_id = t.activity_id AND p.device_id = t.device_id
                                                  AND p.activity_event = 'start')
        RETURNING lt.activity_id, lt.service,
                  CASE WHEN (p_event = 'end' OR t.held_event IS DISTINCT FROM 'end')
                            AND t.held_event_id IS DISTINCT FROM t.event_id THEN t.held_event_id END AS superseded
    ), queued AS (
        SELECT activity_id, service, superseded FROM restarted
        UNION ALL SELECT activity_id, service, superseded FROM rewritten
        UNION ALL SELECT activity_id, service, NULL FROM fresh
        UNION ALL SELECT activity_id, service, superseded FROM held
    )
    SELECT (SELECT coalesce(array_agg(s.event_id), '{}')
              FROM (SELECT m.activity_event_id FROM moot m UNION ALL SELECT q.superseded FROM queued q) s (event_id)
             WHERE s.event_id IS NOT NULL),
           coalesce(array_agg(c.activity_id), '{}'), coalesce(array_agg(c.apns), '{}'), coalesce(array_agg(c.fcm), '{}')
      INTO v_superseded, v_activities, v_apns, v_fcm
      FROM (SELECT q.activity_id, (count(*) FILTER (WHERE q.service = 'apns'))::integer AS apns,
                   (count(*) FILTER (WHERE q.service = 'fcm'))::integer AS fcm
              FROM queued q GROUP BY q.activity_id) c;
    IF cardinality(v_superseded) > 0 THEN
        PERFORM herald_activity_event_counts(v_superseded, NULL, NULL,
                                             array_fill(1, ARRAY[cardinality(v_superseded)]));
    END IF;
    IF p_kind IS NOT NULL THEN
        INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, alert_title,
                                          ttl_seconds, dismiss_at, idempotency_key, devices_apns, devices_fcm)
        SELECT e.id, herald_uuid_v7_time(e.id), a.id, a.partner_id, p_kind,
               CASE WHEN p_states IS NULL THEN a.state ELSE e.state END, p_alert_title, p_ttl_seconds, p_dismiss,
               p_key, coalesce(c.apns, 0), coalesce(c.fcm, 0)
          FROM unnest(p_ids, v_events, coalesce(p_states, array_fill(NULL::jsonb, ARRAY[cardinality(p_ids)])))
               AS e (activity_id, id, state)
          JOIN live_activities a ON a.id = e.activity_id
          LEFT JOIN unnest(v_activities, v_apns, v_fcm) AS c (id, apns, fcm) ON c.id = e.activity_id;
    END IF;
END
$$;
