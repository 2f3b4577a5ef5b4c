-- What a delivery costs Postgres: time-ordered ids, and the completion's all-sent case.
--
-- Delivery ids are time-ordered (UUIDv7), as request ids already were: a random id put every intake insert
-- and every claim's new primary-key entry on a random leaf of deliveries_pkey; in time order the intake
-- appends at the right edge and a claim's rows (claimed in available_at order, which follows the ids) share
-- a few leaves. The intake makes its ids in Swift (HeraldCore UUIDv7); the Live Activity fan-out makes
-- them here.
CREATE FUNCTION herald_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$
    -- 48 bits of UNIX milliseconds, then a version-4 UUID's random bits with the version nibble set to 7
    -- (its variant bits are already 0b10), the layout of Sources/HeraldCore/UUIDv7.swift.
    SELECT encode(set_byte(overlay(r.b PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                                                        FROM 3) FROM 1 FOR 6),
                           6, (get_byte(r.b, 6) & 15) | 112), 'hex')::uuid
      FROM (SELECT uuid_send(gen_random_uuid()) AS b) r
$$;

-- As in 009_live_activities.sql, with time-ordered delivery ids.
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
         WHERE p_device IS NULL OR t.device_id = p_device
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

-- As in 009_live_activities.sql, with time-ordered delivery ids.
CREATE OR REPLACE FUNCTION herald_activity_start(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamptz,
    p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb,
    p_expires timestamptz, p_timestamp bigint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint,
    p_devices text[], p_services text[], p_environments text[], p_apns_start text, p_fcm_start text,
    p_old uuid, p_old_apns_end text, p_old_fcm_end text, p_old_timestamp bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_old record;
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
    RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at INTO v_old;
    IF v_old.id IS NOT NULL THEN
        PERFORM herald_activity_dispatch(ARRAY[v_old.id], 'end', ARRAY[v_old.apns_end_payload], NULL,
                                         ARRAY[v_old.fcm_end_payload], NULL, ARRAY[5::smallint],
                                         ARRAY[v_old.created_at + interval '12 hours']);
    END IF;

    INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                 last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                 fcm_end_payload, end_timestamp)
    VALUES (p_id, p_partner, p_mini_app, p_user, p_template, p_attributes, p_state, p_start_alert, p_timestamp,
            p_now, p_now, p_expires, p_apns_end, p_fcm_end, p_end_timestamp);
    INSERT INTO live_activity_targets (activity_id, device_id, service)
    SELECT p_id, x.device_id, x.service FROM unnest(p_devices, p_services) AS x (device_id, service);
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                            environment, payload, available_at, expires_at, activity_id, activity_event, priority)
    SELECT herald_uuid_v7(), p_id, p_now, p_partner, 0, x.service, p_user, x.device_id, x.environment,
           CASE x.service WHEN 'apns' THEN p_apns_start ELSE p_fcm_start END, p_now, p_expires, p_id, 'start',
           CASE x.service WHEN 'apns' THEN 10::smallint END
      FROM unnest(p_devices, p_services, p_environments) AS x (device_id, service, environment);
    RETURN 'started';
END
$$;

-- As in 010_operations.sql, without the id -> outcome map when every outcome is 'sent'.
CREATE OR REPLACE FUNCTION herald_complete_deliveries(p_worker text, p_ids uuid[], p_outcomes text[], p_errors text[],
                                           p_retry_at text[], p_tokens text[])
RETURNS TABLE (finished_count bigint, retried_count bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
-- Never JIT: the generic plan's cost grows with the table (a 10M-row backlog estimates ~800k), which
-- made Postgres JIT-compile the claim on every call (~140 ms for a 5 ms query).
SET jit = off
-- As the activity functions above: index paths only, whatever the plan cached when the tables were small.
SET enable_seqscan = off
AS $$
DECLARE
    v_final    uuid[];
    v_retry    uuid[];
    -- id -> [outcome, error, retry_at, token]
    v_meta     jsonb;
    v_finished bigint := 0;
    v_retried  bigint := 0;
    v_woken    bigint := 0;
    -- Nearly every batch of a drain is all 'sent': then no row needs an error, a token or a retry
    -- time, and the id -> outcome map (a uuid-to-text conversion and a jsonb lookup per field and
    -- row, ~7% of the completion's CPU) is not built.
    v_all_sent boolean := p_outcomes <@ ARRAY['sent'];
BEGIN
    IF v_all_sent THEN
        v_final := p_ids;
        v_retry := '{}';
    ELSE
    SELECT coalesce(array_agg(x.id) FILTER (WHERE x.outcome NOT IN ('retry', 'deferred')), '{}'),
           coalesce(array_agg(x.id) FILTER (WHERE x.outcome IN ('retry', 'deferred')), '{}'),
           coalesce(jsonb_object_agg(x.id::text, jsonb_build_array(x.outcome, nullif(x.error, ''),
                                                                    nullif(x.retry_at, ''), nullif(x.token, ''))), '{}')
      INTO v_final, v_retry, v_meta
      FROM unnest(p_ids, p_outcomes, p_errors, p_retry_at, p_tokens) AS x (id, outcome, error, retry_at, token);
    END IF;

    IF cardinality(v_final) > 0 THEN
        WITH finished AS (
            -- leased_by is set only while a row is leased, so it alone says "still mine"; a
            -- state = 'leased' condition would let the planner pick deliveries_lease and test every
            -- leased row of every worker against the id array.
            DELETE FROM deliveries d
             WHERE d.id = ANY (v_final) AND d.leased_by = p_worker
            RETURNING d.id, d.request_id, d.request_created_at, d.partner_id, d.lane, d.service, d.user_id,
                      d.device_id, d.attempts, d.created_at, d.activity_id, d.activity_event,
                      -- Only what `heraldctl replay` may send again keeps its bytes: sent rows (nearly all)
                      -- and Live Activity rows stay small.
                      CASE WHEN d.activity_id IS NULL AND NOT v_all_sent
                                AND v_meta -> (d.id::text) ->> 0 IN ('failed', 'dead', 'expired')
                           THEN d.payload END AS payload,
                      CASE WHEN v_all_sent THEN 'sent' ELSE v_meta -> (d.id::text) ->> 0 END AS outcome,
                      CASE WHEN NOT v_all_sent THEN v_meta -> (d.id::text) ->> 1 END AS error,
                      CASE WHEN NOT v_all_sent THEN v_meta -> (d.id::text) ->> 3 END AS token
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at, activity_event,
                                          request_created_at, payload)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts, error,
                   created_at, now(), activity_event, request_created_at, payload
              FROM finished
        ), counts AS (
            SELECT request_id, request_created_at,
                   count(*) FILTER (WHERE outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE outcome <> 'sent') AS failed
              FROM finished GROUP BY request_id, request_created_at
        ), locked AS (
            -- Audit rows locked in id order: two workers finishing rows of the same requests
            -- take the locks in the same order and cannot deadlock.
            SELECT r.id, r.created_at FROM push_requests r JOIN counts c
                ON r.id = c.request_id AND r.created_at = c.request_created_at
             ORDER BY r.id FOR UPDATE OF r
        ), rollup AS (
            UPDATE push_requests r SET sent = r.sent + c.sent, failed = r.failed + c.failed
              FROM counts c JOIN locked l ON l.id = c.request_id AND l.created_at = c.request_created_at
             WHERE r.id = c.request_id AND r.created_at = c.request_created_at
        ), dead_tokens AS (
            -- Only the token the row went to: a push's device token, a Live Activity start's push-to-start
            -- token, an FCM token; an activity's own token is the activity's (below), never the device's.
            UPDATE devices v
               SET apns_token_invalidated_at = CASE WHEN f.service = 'apns' AND f.activity_event IS NULL THEN now()
                                                    ELSE v.apns_token_invalidated_at END,
                   apns_push_to_start_invalidated_at = CASE WHEN f.service = 'apns' AND f.activity_event = 'start'
                                                            THEN now() ELSE v.apns_push_to_start_invalidated_at END,
                   fcm_token_invalidated_at = CASE WHEN f.service = 'fcm' THEN now()
                                                   ELSE v.fcm_token_invalidated_at END,
                   updated_at = now()
              FROM finished f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL
               AND (f.service = 'fcm' OR f.activity_event IS NULL OR f.activity_event = 'start')
               AND v.user_id = f.user_id AND v.device_id = f.device_id
               AND f.token = CASE WHEN f.service = 'fcm' THEN v.fcm_token
                                  WHEN f.activity_event = 'start' THEN v.apns_push_to_start_token
                                  ELSE v.apns_token END
        ), dead_activity_tokens AS (
            UPDATE live_activity_targets t SET update_token_invalidated_at = now()
              FROM finished f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL AND f.service = 'apns'
               AND f.activity_event IN ('update', 'end')
               AND t.activity_id = f.activity_id AND t.device_id = f.device_id AND t.update_token = f.token
        ), next_activity_rows AS (
            -- The row that waited for a finished one of the same activity and device is due now (and
            -- fresh for the claim's cursors); listening workers are told below.
            UPDATE deliveries n SET available_at = now()
              FROM finished f
             WHERE f.activity_id IS NOT NULL AND n.activity_id = f.activity_id AND n.device_id = f.device_id
               AND n.state = 'pending' AND n.available_at <= now()
            RETURNING 1
        )
        SELECT (SELECT count(*) FROM finished), (SELECT count(*) FROM next_activity_rows) INTO v_finished, v_woken;
        IF v_woken > 0 THEN
            PERFORM pg_notify('herald_deliveries', '');
        END IF;
    END IF;

    IF cardinality(v_retry) > 0 THEN
        UPDATE deliveries d
           SET state = 'pending', available_at = (v_meta -> (d.id::text) ->> 2)::timestamptz,
               last_error = v_meta -> (d.id::text) ->> 1, leased_by = NULL, lease_expires_at = NULL,
               -- A deferred row was held back by Herald's own setup fault: the claim's attempt is given back.
               attempts = CASE WHEN v_meta -> (d.id::text) ->> 0 = 'deferred' THEN greatest(d.attempts - 1, 0)
                               ELSE d.attempts END
         WHERE d.id = ANY (v_retry) AND d.leased_by = p_worker;
        GET DIAGNOSTICS v_retried = ROW_COUNT;
    END IF;

    RETURN QUERY SELECT v_finished, v_retried;
END
$$;
