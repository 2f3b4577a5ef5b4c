--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: herald_activity_audience(text, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_audience(p_tenant text, p_email text, p_wallet text, p_mini_app text, p_session_since timestamp with time zone) RETURNS TABLE(user_id text, has_session boolean, opted_out boolean, devices text, old_id uuid, old_template text, old_attributes text, old_state text, old_last_timestamp bigint, old_created_at timestamp with time zone, old_expires_at timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH u AS (
        SELECT e.user_id FROM user_emails e WHERE e.tenant_id = p_tenant AND e.email = p_email
        UNION ALL
        SELECT w.user_id FROM user_wallets w WHERE w.tenant_id = p_tenant AND w.wallet = p_wallet
        LIMIT 1
    )
    SELECT u.user_id,
           EXISTS (SELECT 1 FROM mini_app_sessions s
                    WHERE s.user_id = u.user_id AND s.mini_app_id = p_mini_app AND s.last_seen_at >= p_session_since),
           EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_app),
           coalesce(l.devices, '[]'),
           a.id, a.template, a.attributes::text, a.state::text, a.last_timestamp, a.created_at, a.expires_at
      FROM u
      LEFT JOIN LATERAL (
          -- [[device_id, service, environment], ...] in device order.
          SELECT json_agg(json_build_array(d.device_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END,
                                           d.environment) ORDER BY d.device_id)::text AS devices
            FROM devices d
           WHERE d.user_id = u.user_id
             AND ((d.platform = 'ios' AND d.apns_push_to_start_token IS NOT NULL
                   AND d.apns_push_to_start_invalidated_at IS NULL)
               OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
      ) l ON true
      LEFT JOIN live_activities a ON a.user_id = u.user_id AND a.mini_app_id = p_mini_app AND a.status = 'active';
END
$$;


--
-- Name: herald_activity_begin_change(uuid, uuid, integer, text, text, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_begin_change(p_partner uuid, p_id uuid, p_version integer, p_key text, p_body_hash text, p_response text, p_now timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_activity record;
BEGIN
    SELECT a.status, a.version, a.expires_at INTO v_activity
      FROM live_activities a WHERE a.id = p_id AND a.partner_id = p_partner FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF v_activity.status <> 'active' OR v_activity.expires_at <= now() THEN
        RETURN 'ended';
    ELSIF v_activity.version <> p_version THEN
        RETURN 'conflict';
    ELSIF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 200::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: herald_activity_claim_key(uuid, text, text, uuid, text, smallint, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_claim_key(p_partner uuid, p_key text, p_body_hash text, p_request uuid, p_response text, p_status smallint, p_now timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_taken integer;
BEGIN
    IF p_key IS NULL THEN
        RETURN true;
    END IF;
    INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at, status)
    VALUES (p_partner, p_key, p_body_hash, p_request, p_response, p_now, p_status)
    ON CONFLICT (partner_id, key) DO UPDATE
       SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id, response = EXCLUDED.response,
           created_at = EXCLUDED.created_at, status = EXCLUDED.status
     WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours';
    GET DIAGNOSTICS v_taken = ROW_COUNT;
    RETURN v_taken = 1;
END
$$;


--
-- Name: herald_activity_dispatch(uuid[], text, text[], text[], text[], text[], smallint[], timestamp with time zone[], text, smallint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_dispatch(p_ids uuid[], p_event text, p_apns text[], p_apns_start text[], p_fcm text[], p_fcm_start text[], p_priorities smallint[], p_expires timestamp with time zone[], p_device text DEFAULT NULL::text, p_lane smallint DEFAULT 0) RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
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


--
-- Name: herald_activity_end(uuid, text, text, text, uuid, integer, timestamp with time zone, jsonb, timestamp with time zone, bigint, text, text, smallint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_end(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer, p_now timestamp with time zone, p_state jsonb, p_dismiss timestamp with time zone, p_timestamp bigint, p_apns text, p_fcm text, p_priority smallint) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_refusal text;
    v_created timestamptz;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET state = p_state, status = 'ended', version = version + 1, last_timestamp = p_timestamp,
           end_timestamp = p_timestamp, updated_at = p_now, ended_at = p_now, dismiss_at = p_dismiss,
           apns_end_payload = p_apns, fcm_end_payload = p_fcm
     WHERE id = p_id
    RETURNING created_at INTO v_created;
    PERFORM herald_activity_dispatch(ARRAY[p_id], 'end', ARRAY[p_apns], NULL, ARRAY[p_fcm], NULL,
                                     ARRAY[p_priority], ARRAY[v_created + interval '12 hours']);
    RETURN 'ended_now';
END
$$;


--
-- Name: herald_activity_finished_event(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_finished_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_sent integer;
    v_failed integer;
    v_suppressed integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM partners p WHERE p.id = NEW.partner_id AND p.webhook_url IS NOT NULL) THEN
        RETURN NULL;
    END IF;
    SELECT count(*) FILTER (WHERE h.outcome = 'sent'),
           count(*) FILTER (WHERE h.outcome NOT IN ('sent', 'suppressed', 'superseded')),
           count(*) FILTER (WHERE h.outcome = 'suppressed')
      INTO v_sent, v_failed, v_suppressed
      FROM delivery_history h
     WHERE h.request_id = NEW.id;
    PERFORM herald_webhook_event(NEW.partner_id, 'activity.' || NEW.status, NEW.id, 'activityId', v_sent, v_failed,
                                 v_suppressed);
    RETURN NULL;
END
$$;


--
-- Name: herald_activity_start(uuid, text, text, text, uuid, timestamp with time zone, text, text, text, jsonb, jsonb, jsonb, timestamp with time zone, bigint, text, text, bigint, text[], text[], text[], text, text, uuid, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_start(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamp with time zone, p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb, p_expires timestamp with time zone, p_timestamp bigint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint, p_devices text[], p_services text[], p_environments text[], p_apns_start text, p_fcm_start text, p_old uuid, p_old_apns_end text, p_old_fcm_end text, p_old_timestamp bigint) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
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


--
-- Name: herald_activity_token(uuid, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_token(p_id uuid, p_device text, p_token text) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_activity record;
    v_target record;
BEGIN
    SELECT a.* INTO v_activity FROM live_activities a WHERE a.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    SELECT t.* INTO v_target FROM live_activity_targets t WHERE t.activity_id = p_id AND t.device_id = p_device;
    IF NOT FOUND THEN
        RETURN 'not_found';
    ELSIF v_target.service <> 'apns' THEN
        RETURN 'not_ios';
    ELSIF v_target.update_token = p_token AND v_target.update_token_invalidated_at IS NULL THEN
        RETURN 'unchanged';
    END IF;
    UPDATE live_activity_targets
       SET update_token = p_token, update_token_invalidated_at = NULL, held_event = NULL
     WHERE activity_id = p_id AND device_id = p_device;
    IF v_target.held_event IS NULL THEN
        RETURN 'stored';
    END IF;
    IF v_target.held_event = 'end' THEN
        PERFORM herald_activity_dispatch(ARRAY[p_id], 'end', ARRAY[v_activity.apns_end_payload], NULL,
                                         ARRAY[v_activity.fcm_end_payload], NULL, ARRAY[5::smallint],
                                         ARRAY[v_activity.created_at + interval '12 hours'], p_device);
    ELSE
        PERFORM herald_activity_dispatch(ARRAY[p_id], 'update', ARRAY[v_activity.apns_update_payload], NULL,
                                         ARRAY[NULL::text], NULL,
                                         ARRAY[coalesce(v_activity.apns_update_priority, 5::smallint)],
                                         ARRAY[v_activity.expires_at], p_device);
    END IF;
    RETURN 'sent';
END
$$;


--
-- Name: herald_activity_update(uuid, text, text, text, uuid, integer, timestamp with time zone, jsonb, timestamp with time zone, bigint, text, text, text, text, smallint, text, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_update(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer, p_now timestamp with time zone, p_state jsonb, p_expires timestamp with time zone, p_timestamp bigint, p_apns text, p_apns_start text, p_fcm text, p_fcm_start text, p_priority smallint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_refusal text;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET state = p_state, version = version + 1, last_timestamp = p_timestamp, updated_at = p_now,
           expires_at = p_expires, apns_update_payload = p_apns, apns_update_priority = p_priority,
           apns_end_payload = p_apns_end, fcm_end_payload = p_fcm_end, end_timestamp = p_end_timestamp
     WHERE id = p_id;
    PERFORM herald_activity_dispatch(ARRAY[p_id], 'update', ARRAY[p_apns], ARRAY[p_apns_start], ARRAY[p_fcm],
                                     ARRAY[p_fcm_start], ARRAY[p_priority], ARRAY[p_expires]);
    RETURN 'updated';
END
$$;


--
-- Name: herald_backfill_apply(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_backfill_apply(p_run uuid) RETURNS TABLE(line integer, outcome text, first_line integer)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
DECLARE
    v_accepted uuid[];
BEGIN
    -- In line order, so two runs of one file take the keys' locks in the same order.
    WITH written AS (
        INSERT INTO backfill_keys AS b (partner_id, key, request_id, run_id, line, created_at)
        SELECT l.partner_id, l.key, l.request_id, p_run, l.line, l.created_at
          FROM herald_backfill_lines l
         ORDER BY l.line
        ON CONFLICT (partner_id, key) DO NOTHING
        RETURNING b.request_id
    )
    SELECT coalesce(array_agg(written.request_id), '{}') INTO v_accepted FROM written;

    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body, deep_link, data,
                               send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    SELECT l.request_id, l.created_at, l.partner_id, l.mini_app_id, NULL, l.title, l.body, l.deep_link, l.data,
           l.send_at, l.ttl_seconds, l.expires_at, 1, l.recipients, l.deliveries, l.suppressed, l.missing
      FROM herald_backfill_lines l
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = l.request_id;

    -- Sorted, so two runs at once take the rows' locks in one order.
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    SELECT DISTINCT ON (s.user_id, l.mini_app_id) s.user_id, l.mini_app_id, l.created_at
      FROM herald_backfill_senders s
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = s.request_id
      JOIN herald_backfill_lines l ON l.request_id = s.request_id
     ORDER BY s.user_id, l.mini_app_id, l.created_at
    ON CONFLICT DO NOTHING;

    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                            environment, payload, available_at, expires_at)
    SELECT x.id, x.request_id, l.created_at, l.partner_id, 1, x.service, x.user_id, x.device_id, x.environment,
           x.payload, coalesce(l.send_at, l.created_at), l.expires_at
      FROM herald_backfill_deliveries x
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = x.request_id
      JOIN herald_backfill_lines l ON l.request_id = x.request_id;

    RETURN QUERY
    SELECT l.line,
           CASE WHEN a.request_id IS NOT NULL THEN 'accepted'
                WHEN b.run_id = p_run THEN 'duplicate_key'
                ELSE 'duplicate' END,
           CASE WHEN a.request_id IS NULL AND b.run_id = p_run THEN b.line END
      FROM herald_backfill_lines l
      LEFT JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = l.request_id
      LEFT JOIN backfill_keys b ON b.partner_id = l.partner_id AND b.key = l.key
     ORDER BY l.line;
END
$$;


--
-- Name: herald_backfill_resolve(integer[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_backfill_resolve(p_lines integer[], p_tenants text[], p_mini_apps text[], p_kinds text[], p_idents text[]) RETURNS TABLE(line integer, kind text, ident text, user_id text, service text, environment text, opted_out boolean)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH req AS (
        SELECT r.line, r.tenant, r.mini_app, r.kind,
               CASE WHEN r.kind = 'e' AND r.ident IS NOT NFC NORMALIZED THEN normalize(r.ident, NFC) ELSE r.ident END
                   AS ident
          FROM unnest(p_lines, p_tenants, p_mini_apps, p_kinds, p_idents) AS r (line, tenant, mini_app, kind, ident)
    ), ids AS (
        SELECT r.line, 'e'::text AS kind, e.email AS ident, e.user_id, r.mini_app
          FROM req r JOIN user_emails e ON e.tenant_id = r.tenant AND e.email = r.ident
         WHERE r.kind = 'e'
        UNION ALL
        SELECT r.line, 'w', w.wallet, w.user_id, r.mini_app
          FROM req r JOIN user_wallets w ON w.tenant_id = r.tenant AND w.wallet = r.ident
         WHERE r.kind = 'w'
    ), targets AS (
        SELECT u.line, u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = u.mini_app) AS opted_out
          FROM (SELECT DISTINCT ids.line, ids.user_id, ids.mini_app FROM ids) AS u
    )
    SELECT ids.line, ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean FROM ids
    UNION ALL
    SELECT t.line, 'u', NULL, t.user_id, NULL, NULL, t.opted_out FROM targets t
    UNION ALL
    SELECT t.line, 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment,
           NULL
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
END
$$;


--
-- Name: herald_backfill_stage(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_backfill_stage() RETURNS void
    LANGUAGE plpgsql
    SET client_min_messages TO 'warning'
    AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_lines (
        line        integer NOT NULL,
        partner_id  uuid NOT NULL,
        key         text NOT NULL,
        request_id  uuid NOT NULL,
        created_at  timestamptz NOT NULL,
        mini_app_id text NOT NULL,
        title       text NOT NULL,
        body        text NOT NULL,
        deep_link   text,
        data        jsonb NOT NULL,
        send_at     timestamptz,
        ttl_seconds integer NOT NULL,
        expires_at  timestamptz NOT NULL,
        recipients  integer NOT NULL,
        suppressed  integer NOT NULL,
        missing     jsonb NOT NULL,
        deliveries  integer NOT NULL
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_deliveries (
        request_id  uuid NOT NULL,
        id          uuid NOT NULL,
        service     text NOT NULL,
        user_id     text NOT NULL,
        device_id   text NOT NULL,
        environment text NOT NULL,
        payload     text NOT NULL
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_senders (
        request_id uuid NOT NULL,
        user_id    text NOT NULL
    ) ON COMMIT DELETE ROWS;
END
$$;


--
-- Name: herald_backfill_users(integer[], text[], text[], integer[], integer[], text[], integer[], integer[], text[], integer[], integer[], text[], text[], text[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_backfill_users(p_lines integer[], p_users text[], p_tenants text[], p_email_start integer[], p_email_count integer[], p_emails text[], p_wallet_start integer[], p_wallet_count integer[], p_wallets text[], p_device_start integer[], p_device_count integer[], p_device_ids text[], p_platforms text[], p_environments text[], p_bundles text[], p_apns text[], p_push_to_start text[], p_fcm text[]) RETURNS TABLE(line integer, outcome text, created boolean, devices integer)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_created boolean;
    v_first   integer;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_lines), 0) LOOP
        BEGIN
            v_created := herald_put_user(
                p_users[i], p_tenants[i],
                coalesce(p_emails[p_email_start[i] : p_email_start[i] + p_email_count[i] - 1], '{}'),
                coalesce(p_wallets[p_wallet_start[i] : p_wallet_start[i] + p_wallet_count[i] - 1], '{}'));
            v_first := p_device_start[i];
            FOR j IN v_first .. v_first + p_device_count[i] - 1 LOOP
                PERFORM herald_put_device(p_users[i], p_device_ids[j], p_platforms[j], p_environments[j], p_bundles[j],
                                          p_apns[j], p_push_to_start[j], p_fcm[j]);
            END LOOP;
            line := p_lines[i]; outcome := 'ok'; created := v_created; devices := p_device_count[i];
        EXCEPTION WHEN unique_violation THEN
            line := p_lines[i]; outcome := 'identifier_taken'; created := false; devices := 0;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;


--
-- Name: herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamp with time zone[], integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[], p_cursor_lanes smallint[], p_cursor_partners uuid[], p_cursor_times timestamp with time zone[], p_bulk_limit integer) RETURNS TABLE(id uuid, service text, environment text, payload text, attempts integer, expires_at timestamp with time zone, token text, verdict text, lane smallint, partner_id uuid, available_at timestamp with time zone, bundle_id text, activity_event text, priority smallint, group_id uuid, member integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
#variable_conflict use_column
DECLARE
    v_lane     smallint;
    v_partners uuid[];
    v_floors   timestamptz[];
    v_quota    integer;
    -- Deliveries taken so far (a group counts its members not yet done).
    v_taken    integer := 0;
    v_i        integer;
    v_part     integer;
    v_rec      record;
    -- Row versions (ctid), not ids: the rows are locked by this transaction, so a version found here
    -- is the one to update, and the one updated is the one to return; a TID scan reads its page
    -- directly where an id costs a descent of deliveries_pkey.
    v_locked   tid[];
    v_claimed  tid[] := '{}';
    v_next_partners uuid[];
    v_next_floors   timestamptz[];
    -- What this lane may add to the batch: the whole batch for realtime; for bulk, what is left under
    -- the worker's bulk allowance.
    v_lane_limit integer;
BEGIN
    FOREACH v_lane IN ARRAY ARRAY[0, 1]::smallint[] LOOP
        EXIT WHEN v_taken >= p_limit;
        v_lane_limit := CASE WHEN v_lane = 0 THEN p_limit ELSE least(p_limit, v_taken + greatest(p_bulk_limit, 0)) END;
        CONTINUE WHEN v_taken >= v_lane_limit;
        -- Every partner (a small table), with where its queue's live part starts if known. A partner
        -- without due rows costs the first round one index probe (the loop's query finds nothing) and
        -- leaves the rounds.
        SELECT coalesce(array_agg(p.id ORDER BY p.id), '{}'),
               coalesce(array_agg(c.cursor_time - interval '10 seconds' ORDER BY p.id), '{}')
          INTO v_partners, v_floors
          FROM partners p
          LEFT JOIN unnest(p_cursor_lanes, p_cursor_partners, p_cursor_times) AS c (lane, partner_id, cursor_time)
            ON c.partner_id = p.id AND c.lane = v_lane;

        -- Rounds: every partner still in the running gets an equal share of what is left.
        WHILE cardinality(v_partners) > 0 AND v_taken < v_lane_limit LOOP
            v_quota := ceil((v_lane_limit - v_taken)::numeric / cardinality(v_partners))::integer;
            v_locked := '{}';
            v_next_partners := '{}';
            v_next_floors := '{}';
            FOR v_i IN 1 .. cardinality(v_partners) LOOP
                EXIT WHEN v_taken >= v_lane_limit;
                v_part := 0;
                -- Rows are locked as the loop fetches them (a few at a time): one fetched past the
                -- quota stays locked, unleased, until this claim commits. A group may take the
                -- partner past its quota by less than its size.
                FOR v_rec IN
                    SELECT d.ctid AS tid, herald_delivery_weight(d.member_count, d.members_done) AS weight
                      FROM deliveries d
                     WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id = v_partners[v_i]
                       AND d.available_at >= coalesce(v_floors[v_i], '-infinity')
                       AND d.available_at <= now() AND d.service = ANY (p_services)
                       -- One send at a time per activity and device: a newer state waits for the one in
                       -- flight (and takes every update meanwhile), so the phone gets them in order and
                       -- only the newest.
                       AND (d.activity_id IS NULL
                            OR NOT EXISTS (SELECT 1 FROM deliveries l
                                            WHERE l.activity_id = d.activity_id
                                              AND l.device_id = d.device_id AND l.state = 'leased'))
                     ORDER BY d.available_at
                     -- Never more rows than deliveries wanted; and a limit keeps the plan the ordered
                     -- scan of deliveries_due_partner (a loop's query is planned for all its rows).
                     LIMIT v_quota
                       FOR UPDATE SKIP LOCKED
                LOOP
                    v_locked := v_locked || v_rec.tid;
                    v_part := v_part + v_rec.weight;
                    v_taken := v_taken + v_rec.weight;
                    EXIT WHEN v_part >= v_quota OR v_taken >= v_lane_limit;
                END LOOP;
                -- A partner that filled its share may have more: it stays for the next round.
                IF v_part >= v_quota THEN
                    v_next_partners := v_next_partners || v_partners[v_i];
                    v_next_floors := v_next_floors || v_floors[v_i];
                END IF;
            END LOOP;
            EXIT WHEN cardinality(v_locked) = 0;
            -- A statement of its own: its snapshot sees every version the lock above took (one a
            -- rescuer committed a moment ago included).
            WITH leased AS (
                UPDATE deliveries d
                   SET state = 'leased', leased_by = p_worker, attempts = d.attempts + 1,
                       lease_expires_at = now() + make_interval(secs => p_lease_seconds)
                 WHERE d.ctid = ANY (v_locked)
                RETURNING d.ctid AS tid)
            SELECT v_claimed || coalesce(array_agg(l.tid), '{}') INTO v_claimed FROM leased l;
            v_partners := v_next_partners;
            v_floors := v_next_floors;
        END LOOP;
    END LOOP;

    RETURN QUERY
    SELECT d.id, d.service, d.environment, d.payload, d.attempts, d.expires_at,
           -- The token the row is for: a push uses the device's, a Live Activity start the push-to-start
           -- token, its update and end the activity's own token (FCM: the device's token for all).
           CASE WHEN d.service = 'fcm' THEN v.fcm_token
                WHEN d.activity_event IS NULL THEN v.apns_token
                WHEN d.activity_event = 'start' THEN v.apns_push_to_start_token
                ELSE t.update_token END,
           CASE
               WHEN d.expires_at IS NOT NULL AND d.expires_at <= now() THEN 'expired'
               WHEN v.device_id IS NULL THEN 'device_removed'
               -- A start of an activity that ended before it went out, or a row of an activity with a
               -- newer row for the same device (an older one back from a retry or a rescue).
               WHEN d.activity_event = 'start' AND a.status IS DISTINCT FROM 'active' THEN 'superseded'
               WHEN d.activity_id IS NOT NULL
                    AND EXISTS (SELECT 1 FROM deliveries n
                                 WHERE n.activity_id = d.activity_id AND n.device_id = d.device_id
                                   AND (n.created_at, n.id) > (d.created_at, d.id)) THEN 'superseded'
               WHEN d.service = 'fcm' AND (v.fcm_token IS NULL OR v.fcm_token_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN d.service = 'apns' AND d.activity_event IS NULL
                    AND (v.apns_token IS NULL OR v.apns_token_invalidated_at IS NOT NULL) THEN 'token_invalid'
               WHEN d.service = 'apns' AND d.activity_event = 'start'
                    AND (v.apns_push_to_start_token IS NULL OR v.apns_push_to_start_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN d.service = 'apns' AND d.activity_event IN ('update', 'end')
                    AND (t.update_token IS NULL OR t.update_token_invalidated_at IS NOT NULL) THEN 'token_invalid'
               WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = d.user_id AND o.mini_app_id = d.mini_app_id)
                   THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id, d.activity_event, d.priority, d.group_id, d.member
      -- The claimed deliveries: single rows as they are (no function scan per row), a group's members
      -- not yet done unnested with the group's columns. The partner's mini-app (what an opt-out names) is
      -- looked up once per claimed row, before a group is unnested.
      FROM (SELECT s.id, s.user_id, s.device_id, s.payload, NULL::uuid AS group_id, NULL::integer AS member,
                   s.service, s.environment, s.attempts, s.expires_at, s.activity_id, s.activity_event, s.created_at,
                   s.partner_id, s.lane, s.available_at, s.priority, sp.mini_app_id
              FROM deliveries s
              LEFT JOIN partners sp ON sp.id = s.partner_id
             WHERE s.ctid = ANY (v_claimed) AND s.members IS NULL
            UNION ALL
            SELECT m.id, m.user_id, m.device_id, m.payload, g.id, m.member::integer,
                   g.service, g.environment, g.attempts, g.expires_at, g.activity_id, g.activity_event, g.created_at,
                   g.partner_id, g.lane, g.available_at, g.priority, gp.mini_app_id
              FROM deliveries g
              LEFT JOIN partners gp ON gp.id = g.partner_id
             CROSS JOIN LATERAL unnest(g.members, g.member_users, g.member_devices, g.member_payloads)
                   WITH ORDINALITY AS m (id, user_id, device_id, payload, member)
             WHERE g.ctid = ANY (v_claimed) AND g.members IS NOT NULL
               AND NOT m.member = ANY (coalesce(g.members_done, '{}'))) d
      LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
      LEFT JOIN live_activities a ON a.id = d.activity_id
      LEFT JOIN live_activity_targets t ON t.activity_id = d.activity_id AND t.device_id = d.device_id;
END
$$;


--
-- Name: herald_complete_deliveries(text, uuid[], text[], text[], text[], text[], uuid[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_complete_deliveries(p_worker text, p_ids uuid[], p_outcomes text[], p_errors text[], p_retry_at text[], p_tokens text[], p_groups uuid[] DEFAULT NULL::uuid[], p_members integer[] DEFAULT NULL::integer[]) RETURNS TABLE(finished_count bigint, retried_count bigint)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_final    uuid[];
    v_retry    uuid[];
    -- id -> [outcome, error, retry_at, token]
    v_meta     jsonb;
    v_finished bigint := 0;
    v_retried  bigint := 0;
    v_woken    bigint := 0;
    v_member_finished bigint := 0;
    v_member_retried  bigint := 0;
    v_emptied  uuid[];
    -- Per request: what this batch adds to its sent and failed counts (rolled up once, at the end).
    v_c_requests uuid[] := '{}';
    v_c_created  timestamptz[] := '{}';
    v_c_sent     bigint[] := '{}';
    v_c_failed   bigint[] := '{}';
    -- Nearly every batch of a drain is all 'sent': then no row needs an error, a token or a retry
    -- time, and the id -> outcome map (a uuid-to-text conversion and a jsonb lookup per field and
    -- row, ~7% of the completion's CPU) is not built.
    v_all_sent boolean := p_outcomes <@ ARRAY['sent'];
    -- The groups of this batch, in id order: rows are locked in the order the lease extender's and
    -- the singles' `id = ANY (...)` scans take them, so two statements of one worker cannot deadlock.
    v_groups   uuid[] := (SELECT coalesce(array_agg(DISTINCT g ORDER BY g), '{}') FROM unnest(p_groups) g
                           WHERE g IS NOT NULL);
    v_singles  uuid[] := p_ids;
    -- Groups of which this batch holds every member, all sent, none done before (most of a drain's), in
    -- id order, with how many members each has here; and those of them deleted whole.
    v_whole        uuid[];
    v_whole_counts integer[];
    v_deleted      uuid[] := '{}';
BEGIN
    IF cardinality(v_groups) > 0 THEN
        SELECT coalesce(array_agg(x.id) FILTER (WHERE x.grp IS NULL), '{}') INTO v_singles
          FROM unnest(p_ids, p_groups) AS x (id, grp);

        SELECT coalesce(array_agg(b.grp ORDER BY b.grp), '{}'), coalesce(array_agg(b.n ORDER BY b.grp), '{}')
          INTO v_whole, v_whole_counts
          FROM (SELECT x.grp, count(DISTINCT x.member)::integer AS n
                  FROM unnest(p_groups, p_members, p_outcomes) AS x (grp, member, outcome)
                 WHERE x.grp IS NOT NULL
                 GROUP BY x.grp
                HAVING bool_and(x.outcome = 'sent')) b;
        IF cardinality(v_whole) > 0 THEN
            -- A group sent whole is deleted as a single row is, and its history row takes the group's own
            -- member arrays (TOAST pointers copied, nothing unnested or joined); the members' outcomes
            -- are not read one by one. Its members were all claimed together (a claim returns a group's
            -- members not yet done), so with none done before, a count equal to member_count is all.
            WITH whole AS (
                DELETE FROM deliveries g
                 WHERE g.id = ANY (v_whole) AND g.leased_by = p_worker
                   AND coalesce(cardinality(g.members_done), 0) = 0
                   AND g.member_count = v_whole_counts[array_position(v_whole, g.id)]
                RETURNING g.id, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.attempts,
                          g.created_at, g.member_count, g.members, g.member_users, g.member_devices
            ), history AS (
                INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                              attempts, last_error, created_at, finished_at, request_created_at,
                                              members, member_users, member_devices)
                SELECT w.id, w.request_id, w.partner_id, w.lane, w.service, '', '', 'sent', w.attempts, NULL,
                       w.created_at, now(), w.request_created_at, w.members, w.member_users, w.member_devices
                  FROM whole w
            ), counts AS (
                SELECT w.request_id, w.request_created_at, sum(w.member_count)::bigint AS sent
                  FROM whole w GROUP BY w.request_id, w.request_created_at
            )
            SELECT coalesce((SELECT array_agg(w.id) FROM whole w), '{}'),
                   coalesce((SELECT sum(w.member_count) FROM whole w), 0),
                   c.requests, c.created, c.sent, c.failed
              INTO v_deleted, v_member_finished, v_c_requests, v_c_created, v_c_sent, v_c_failed
              FROM (SELECT coalesce(array_agg(request_id), '{}') AS requests,
                           coalesce(array_agg(request_created_at), '{}') AS created,
                           coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(0::bigint), '{}') AS failed
                      FROM counts) c;
            IF cardinality(v_deleted) > 0 THEN
                v_groups := ARRAY(SELECT g FROM unnest(v_groups) g WHERE NOT g = ANY (v_deleted) ORDER BY g);
            END IF;
        END IF;
    END IF;

    IF cardinality(v_groups) > 0 THEN

        WITH input AS (
            SELECT x.id, x.outcome, nullif(x.error, '') AS error, nullif(x.retry_at, '')::timestamptz AS retry_at,
                   nullif(x.token, '') AS token, x.grp, x.member
              FROM unnest(p_ids, p_outcomes, p_errors, p_retry_at, p_tokens, p_groups, p_members)
                   AS x (id, outcome, error, retry_at, token, grp, member)
             WHERE x.grp = ANY (v_groups)
        ), marked AS (
            UPDATE deliveries g
               SET members_done = coalesce(g.members_done, '{}') || (SELECT array_agg(i.member) FROM input i
                                                                      WHERE i.grp = g.id)
             WHERE g.id = ANY (v_groups) AND g.leased_by = p_worker
            RETURNING g.id, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.environment,
                      g.attempts, g.created_at, g.expires_at, g.member_users, g.member_devices, g.member_payloads,
                      cardinality(g.members_done) >= cardinality(g.members) AS emptied
        ), group_members AS MATERIALIZED (
            -- The arrays unnested once per group, apart from the join below (whose estimates would
            -- otherwise run the unnest, and detoast the arrays, once per finished member); payloads
            -- only when some member may need its bytes (a failure replay may send, a retry).
            SELECT g.id AS grp, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.environment,
                   g.attempts, g.created_at, g.expires_at, m.user_id, m.device_id, m.payload, m.member
              FROM marked g
             CROSS JOIN LATERAL unnest(g.member_users, g.member_devices,
                                       CASE WHEN NOT v_all_sent THEN g.member_payloads END)
                   WITH ORDINALITY AS m (user_id, device_id, payload, member)
        ), finished_members AS (
            SELECT i.id, g.grp, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.environment,
                   g.attempts, g.created_at, g.expires_at, g.user_id, g.device_id, g.payload,
                   i.outcome, i.error, i.retry_at, i.token
              FROM group_members g JOIN input i ON i.grp = g.grp AND i.member = g.member
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at, request_created_at, payload,
                                          members, member_users, member_devices)
            SELECT f.id, f.request_id, f.partner_id, f.lane, f.service, f.user_id, f.device_id, f.outcome, f.attempts,
                   f.error, f.created_at, now(), f.request_created_at,
                   -- Only what `heraldctl replay` may send again keeps its bytes.
                   CASE WHEN f.outcome IN ('failed', 'dead', 'expired') THEN f.payload END, NULL, NULL, NULL
              FROM finished_members f
             WHERE f.outcome NOT IN ('retry', 'deferred', 'sent')
            UNION ALL
            -- A group's sent members: one row (see delivery_history_deliveries).
            SELECT f.grp, f.request_id, f.partner_id, f.lane, f.service, '', '', 'sent', f.attempts, NULL,
                   f.created_at, now(), f.request_created_at, NULL, array_agg(f.id), array_agg(f.user_id),
                   array_agg(f.device_id)
              FROM finished_members f
             WHERE f.outcome = 'sent'
             GROUP BY f.grp, f.request_id, f.partner_id, f.lane, f.service, f.attempts, f.created_at,
                      f.request_created_at
            RETURNING coalesce(cardinality(members), 1) AS deliveries
        ), split AS (
            -- A deferred member was held back by Herald's own setup fault: the claim's attempt is given back.
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                    environment, payload, attempts, available_at, expires_at, last_error, created_at)
            SELECT f.id, f.request_id, f.request_created_at, f.partner_id, f.lane, f.service, f.user_id, f.device_id,
                   f.environment, f.payload,
                   CASE WHEN f.outcome = 'deferred' THEN greatest(f.attempts - 1, 0) ELSE f.attempts END,
                   f.retry_at, f.expires_at, f.error, f.created_at
              FROM finished_members f
             WHERE f.outcome IN ('retry', 'deferred')
            RETURNING 1
        ), counts AS (
            SELECT f.request_id, f.request_created_at,
                   count(*) FILTER (WHERE f.outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE f.outcome <> 'sent') AS failed
              FROM finished_members f
             WHERE f.outcome NOT IN ('retry', 'deferred')
             GROUP BY f.request_id, f.request_created_at
        ), dead_tokens AS (
            -- Group members are pushes: the device's APNs or FCM token, only if it is still the one used.
            UPDATE devices v
               SET apns_token_invalidated_at = CASE WHEN f.service = 'apns' THEN now() ELSE v.apns_token_invalidated_at END,
                   fcm_token_invalidated_at = CASE WHEN f.service = 'fcm' THEN now() ELSE v.fcm_token_invalidated_at END,
                   updated_at = now()
              FROM finished_members f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL
               AND v.user_id = f.user_id AND v.device_id = f.device_id
               AND f.token = CASE WHEN f.service = 'fcm' THEN v.fcm_token ELSE v.apns_token END
        )
        SELECT v_member_finished + (SELECT coalesce(sum(h.deliveries), 0) FROM history h), (SELECT count(*) FROM split),
               coalesce((SELECT array_agg(g.id) FROM marked g WHERE g.emptied), '{}'),
               v_c_requests || c.requests, v_c_created || c.created, v_c_sent || c.sent, v_c_failed || c.failed
          INTO v_member_finished, v_member_retried, v_emptied, v_c_requests, v_c_created, v_c_sent, v_c_failed
          FROM (SELECT coalesce(array_agg(request_id), '{}') AS requests, coalesce(array_agg(request_created_at), '{}') AS created,
                       coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(failed), '{}') AS failed
                  FROM counts) c;
        -- A statement of its own, so it sees the members the one above marked done.
        IF cardinality(v_emptied) > 0 THEN
            DELETE FROM deliveries d WHERE d.id = ANY (v_emptied) AND d.leased_by = p_worker;
        END IF;
    END IF;

    IF cardinality(v_singles) = 0 THEN
        v_final := '{}';
        v_retry := '{}';
    ELSIF v_all_sent THEN
        v_final := v_singles;
        v_retry := '{}';
    ELSE
    SELECT coalesce(array_agg(x.id) FILTER (WHERE x.outcome NOT IN ('retry', 'deferred')), '{}'),
           coalesce(array_agg(x.id) FILTER (WHERE x.outcome IN ('retry', 'deferred')), '{}'),
           coalesce(jsonb_object_agg(x.id::text, jsonb_build_array(x.outcome, nullif(x.error, ''),
                                                                    nullif(x.retry_at, ''), nullif(x.token, ''))), '{}')
      INTO v_final, v_retry, v_meta
      FROM unnest(p_ids, p_outcomes, p_errors, p_retry_at, p_tokens, coalesce(p_groups, '{}'))
           AS x (id, outcome, error, retry_at, token, grp)
     WHERE x.grp IS NULL;
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
            -- A Live Activity's rows carry the activity's id: there is no request to count them in.
            SELECT request_id, request_created_at,
                   count(*) FILTER (WHERE outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE outcome <> 'sent') AS failed
              FROM finished WHERE activity_id IS NULL GROUP BY request_id, request_created_at
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
        SELECT (SELECT count(*) FROM finished), (SELECT count(*) FROM next_activity_rows),
               v_c_requests || c.requests, v_c_created || c.created, v_c_sent || c.sent, v_c_failed || c.failed
          INTO v_finished, v_woken, v_c_requests, v_c_created, v_c_sent, v_c_failed
          FROM (SELECT coalesce(array_agg(request_id), '{}') AS requests, coalesce(array_agg(request_created_at), '{}') AS created,
                       coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(failed), '{}') AS failed
                  FROM counts) c;
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

    -- The requests' counts, of single rows and group members alike. Audit rows are locked in id order:
    -- two workers finishing rows of the same requests take the locks in the same order and cannot
    -- deadlock. Each is found by its primary key, one probe per request (the LATERAL leaves the planner
    -- no other way); a join let it hash the whole month's partition, every row of it, on each
    -- completion, whenever the partition's statistics were older than its rows.
    IF cardinality(v_c_requests) > 0 THEN
        WITH counts AS (
            SELECT c.request_id, c.request_created_at, sum(c.sent) AS sent, sum(c.failed) AS failed
              FROM unnest(v_c_requests, v_c_created, v_c_sent, v_c_failed) AS c (request_id, request_created_at, sent, failed)
             GROUP BY c.request_id, c.request_created_at
             ORDER BY c.request_id
        ), locked AS (
            SELECT r.id, r.created_at, c.sent, c.failed
              FROM counts c
             CROSS JOIN LATERAL (SELECT p.id, p.created_at FROM push_requests p
                                  WHERE p.id = c.request_id AND p.created_at = c.request_created_at
                                    FOR UPDATE) r
        )
        UPDATE push_requests r SET sent = r.sent + l.sent, failed = r.failed + l.failed
          FROM locked l
         WHERE r.id = l.id AND r.created_at = l.created_at
           -- Bounds the scan of r to the batch's requests whatever join the plan makes. A join on
           -- ctid would not do: a row another worker updated since this statement's snapshot has a
           -- version the snapshot cannot see, where the key finds the old one and follows its update.
           AND r.id = ANY (v_c_requests);
    END IF;

    RETURN QUERY SELECT v_finished + v_member_finished, v_retried + v_member_retried;
END
$$;


--
-- Name: herald_delivery_weight(integer, integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_delivery_weight(p_member_count integer, p_done integer[]) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT p_member_count - coalesce(cardinality(p_done), 0) $$;


--
-- Name: herald_email_nfc(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_email_nfc() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF NEW.email IS NOT NFC NORMALIZED THEN
        NEW.email := normalize(NEW.email, NFC);
    END IF;
    RETURN NEW;
END
$$;


--
-- Name: herald_ensure_monthly_partitions(text, timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_ensure_monthly_partitions(parent text, start timestamp with time zone, months integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    first_month date := date_trunc('month', start AT TIME ZONE 'UTC')::date;
    lower_bound date;
    partition_name text;
    target record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_partitions', 0));
    FOR i IN 0 .. months - 1 LOOP
        lower_bound := (first_month + make_interval(months => i))::date;
        partition_name := format('%s_%s', parent, to_char(lower_bound, 'YYYY_MM'));
        -- The lock above makes this check and the CREATE one step for every caller of this function.
        CONTINUE WHEN to_regclass(quote_ident(partition_name)) IS NOT NULL;
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
            partition_name, parent,
            (lower_bound::timestamp AT TIME ZONE 'UTC'),
            ((lower_bound + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
        FOR target IN
            SELECT a.attname, a.attstattarget FROM pg_attribute a
             WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
        LOOP
            EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS %s',
                           partition_name, target.attname, target.attstattarget);
        END LOOP;
    END LOOP;
END
$$;


--
-- Name: herald_expire_activities(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_expire_activities(p_limit integer) RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_ids     uuid[];
    v_apns    text[];
    v_fcm     text[];
    v_expires timestamptz[];
BEGIN
    WITH due AS (
        SELECT a.id FROM live_activities a
         WHERE a.status = 'active' AND a.expires_at <= now()
         ORDER BY a.expires_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    ), done AS (
        UPDATE live_activities a
           SET status = 'expired', ended_at = now(), updated_at = now(), dismiss_at = a.expires_at,
               last_timestamp = a.end_timestamp, version = a.version + 1
          FROM due WHERE a.id = due.id
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at
    )
    SELECT coalesce(array_agg(id), '{}'), array_agg(apns_end_payload), array_agg(fcm_end_payload),
           array_agg(created_at + interval '12 hours')
      INTO v_ids, v_apns, v_fcm, v_expires
      FROM done;
    IF cardinality(v_ids) > 0 THEN
        -- In the bulk lane: ends of a large sweep go out as fast as the workers have room beside realtime
        -- traffic, never ahead of it (a sweep of 100,000 activities must not stall pushes).
        PERFORM herald_activity_dispatch(v_ids, 'end', v_apns, NULL, v_fcm, NULL,
                                         array_fill(5::smallint, ARRAY[cardinality(v_ids)]), v_expires, NULL,
                                         1::smallint);
        PERFORM pg_notify('herald_deliveries', '');
    END IF;
    RETURN cardinality(v_ids);
END
$$;


--
-- Name: herald_expired_monthly_partitions(text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_expired_monthly_partitions(parent text, cutoff timestamp with time zone) RETURNS SETOF text
    LANGUAGE plpgsql
    AS $$
DECLARE
    child record;
    upper_bound timestamptz;
BEGIN
    FOR child IN
        SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = parent::regclass
    LOOP
        upper_bound := substring(child.bound FROM 'TO \(''([^'']+)''\)')::timestamptz;
        IF upper_bound IS NOT NULL AND upper_bound <= cutoff THEN
            RETURN NEXT child.relname;
        END IF;
    END LOOP;
END
$$;


--
-- Name: herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamp with time zone[], text[], text[], uuid[], timestamp with time zone[], text[], text[], text[], text[], timestamp with time zone[], integer[], timestamp with time zone[], integer[], text[], text[], integer[], text[], text[], integer[], uuid[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_intake_push(p_partner uuid[], p_per_minute integer[], p_per_day integer[], p_tenant text[], p_mini_app text[], p_now timestamp with time zone[], p_key text[], p_body_hash text[], p_request uuid[], p_created timestamp with time zone[], p_title text[], p_body text[], p_deep_link text[], p_data text[], p_send_at timestamp with time zone[], p_ttl integer[], p_expires timestamp with time zone[], p_e_end integer[], p_emails text[], p_e_json text[], p_w_end integer[], p_wallets text[], p_w_json text[], p_s_end integer[], p_delivery uuid[], p_apns text[], p_fcm text[]) RETURNS TABLE(r_item integer, r_outcome text, r_body_hash text, r_response text, r_status integer, r_minute_count integer, r_minute_oldest bigint, r_day_count integer, r_day_oldest bigint, r_now_seconds bigint, r_deliveries integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
DECLARE
    n integer := cardinality(p_partner);
    i integer;
    j integer;
    rec record;
    -- The stored answers found up front (step 1), per push.
    st_hash text[] := array_fill(NULL::text, ARRAY[n]);
    st_resp text[] := array_fill(NULL::text, ARRAY[n]);
    st_status integer[] := array_fill(NULL::integer, ARRAY[n]);
    -- The resolution and the would-be answer (step 2), per push; the devices' fields as text arrays.
    rs_users integer[];
    rs_suppressed integer[];
    rs_devices integer[];
    rs_user_ids text[];
    rs_d_user text[];
    rs_d_device text[];
    rs_d_service text[];
    rs_d_env text[];
    rs_missing text[];
    rs_response text[];
    -- The outcome (step 3), per push.
    o_outcome text[] := array_fill(NULL::text, ARRAY[n]);
    o_hash text[] := array_fill(NULL::text, ARRAY[n]);
    o_resp text[] := array_fill(NULL::text, ARRAY[n]);
    o_status integer[] := array_fill(NULL::integer, ARRAY[n]);
    o_mc integer[] := array_fill(NULL::integer, ARRAY[n]);
    o_mo bigint[] := array_fill(NULL::bigint, ARRAY[n]);
    o_dc integer[] := array_fill(NULL::integer, ARRAY[n]);
    o_do bigint[] := array_fill(NULL::bigint, ARRAY[n]);
    o_now bigint[] := array_fill(NULL::bigint, ARRAY[n]);
    dup_of integer[] := array_fill(NULL::integer, ARRAY[n]);
    -- The current partner's windows, and what each partner locked counted.
    cur uuid;
    cur_at integer := 0;
    minute_count integer;
    minute_oldest bigint;
    day_count integer;
    day_oldest bigint;
    now_s bigint;
    keys text[];
    key_items integer[];
    b_partner uuid[] := '{}';
    b_now bigint[] := '{}';
    b_counted integer[] := '{}';
    b_of integer[] := array_fill(NULL::integer, ARRAY[n]);
    acc integer[] := '{}';
    lost integer[];
BEGIN
    -- 1. The stored answers of the batch's keys (within their 24 hours), in one probe each.
    FOR rec IN
        SELECT x.o, k.body_hash, k.response, k.status
          FROM unnest(p_partner, p_key, p_now) WITH ORDINALITY AS x (p, k, t, o)
          JOIN idempotency_keys k ON k.partner_id = x.p AND k.key = x.k AND k.created_at > x.t - interval '24 hours'
    LOOP
        st_hash[rec.o] := rec.body_hash;
        st_resp[rec.o] := rec.response;
        st_status[rec.o] := rec.status;
    END LOOP;

    -- 2. Every other push's recipients and the answer it would get, in one statement. The
    --    missing identifiers are listed in request order, from their JSON forms.
    SELECT array_agg(a.n_users ORDER BY g.i), array_agg(a.n_suppressed ORDER BY g.i),
           array_agg(a.n_devices ORDER BY g.i), array_agg(a.user_ids::text ORDER BY g.i),
           array_agg(a.d_user ORDER BY g.i), array_agg(a.d_device ORDER BY g.i),
           array_agg(a.d_service ORDER BY g.i), array_agg(a.d_env ORDER BY g.i),
           array_agg(m.missing ORDER BY g.i),
           array_agg('{"requestId":"' || p_request[g.i]::text || '","status":"'
               || CASE WHEN a.n_devices = 0 THEN 'completed' WHEN p_send_at[g.i] IS NOT NULL THEN 'scheduled'
                       ELSE 'queued' END
               || '","recipients":' || a.n_users || ',"deliveries":' || a.n_devices
               || ',"suppressed":' || a.n_suppressed || ',"sent":0,"failed":0,"missing":' || m.missing || '}'
               ORDER BY g.i)
      INTO rs_users, rs_suppressed, rs_devices, rs_user_ids, rs_d_user, rs_d_device, rs_d_service, rs_d_env,
           rs_missing, rs_response
      FROM generate_series(1, n) AS g (i)
      CROSS JOIN LATERAL (
          SELECT coalesce(p_e_end[g.i - 1], 0) + 1 AS e_from, p_e_end[g.i] AS e_to,
                 coalesce(p_w_end[g.i - 1], 0) + 1 AS w_from, p_w_end[g.i] AS w_to) AS b
      CROSS JOIN LATERAL (
          SELECT count(*) FILTER (WHERE r.kind = 'u') AS n_users,
                 count(*) FILTER (WHERE r.kind = 'u' AND r.opted_out) AS n_suppressed,
                 count(*) FILTER (WHERE r.kind = 'd') AS n_devices,
                 coalesce(array_agg(r.ident) FILTER (WHERE r.kind = 'e'), '{}') AS emails,
                 coalesce(array_agg(r.ident) FILTER (WHERE r.kind = 'w'), '{}') AS wallets,
                 coalesce(array_agg(r.user_id) FILTER (WHERE r.kind = 'u'), '{}') AS user_ids,
                 coalesce(array_agg(r.user_id ORDER BY r.user_id, r.ident) FILTER (WHERE r.kind = 'd'), '{}')::text AS d_user,
                 coalesce(array_agg(r.ident ORDER BY r.user_id, r.ident) FILTER (WHERE r.kind = 'd'), '{}')::text AS d_device,
                 coalesce(array_agg(r.service ORDER BY r.user_id, r.ident) FILTER (WHERE r.kind = 'd'), '{}')::text AS d_service,
                 coalesce(array_agg(r.environment ORDER BY r.user_id, r.ident) FILTER (WHERE r.kind = 'd'), '{}')::text AS d_env
            FROM herald_resolve_recipients(p_tenant[g.i], p_emails[b.e_from:b.e_to], p_wallets[b.w_from:b.w_to],
                                           p_mini_app[g.i]) AS r
           WHERE st_hash[g.i] IS NULL) AS a
      CROSS JOIN LATERAL (
          SELECT '{"emails":[' || CASE WHEN cardinality(a.emails) = b.e_to - b.e_from + 1 THEN '' ELSE coalesce((
                     SELECT string_agg(x.j, ',' ORDER BY x.o)
                       FROM unnest(p_emails[b.e_from:b.e_to], p_e_json[b.e_from:b.e_to]) WITH ORDINALITY AS x (v, j, o)
                      WHERE NOT x.v = ANY (a.emails)), '') END
              || '],"wallets":[' || CASE WHEN cardinality(a.wallets) = b.w_to - b.w_from + 1 THEN '' ELSE coalesce((
                     SELECT string_agg(x.j, ',' ORDER BY x.o)
                       FROM unnest(p_wallets[b.w_from:b.w_to], p_w_json[b.w_from:b.w_to]) WITH ORDINALITY AS x (v, j, o)
                      WHERE NOT x.v = ANY (a.wallets)), '') END
              || ']}' AS missing) AS m;

    -- 3. In order, per partner (locked in uuid order, its windows read once): replay, render,
    --    refuse or count.
    FOR i IN SELECT x.o FROM unnest(p_partner) WITH ORDINALITY AS x (p, o) ORDER BY x.p, x.o LOOP
        IF cur IS DISTINCT FROM p_partner[i] THEN
            cur := p_partner[i];
            PERFORM pg_advisory_xact_lock(hashtextextended(cur::text, 7301));
            now_s := floor(extract(epoch FROM clock_timestamp()));
            SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO minute_count, minute_oldest
              FROM rate_buckets b
             WHERE b.partner_id = cur AND b.granularity = 's' AND b.bucket > now_s - 60;
            SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO day_count, day_oldest
              FROM rate_buckets b
             WHERE b.partner_id = cur AND b.granularity = 'm' AND b.bucket > now_s / 60 - 1440;
            b_partner := b_partner || cur;
            b_now := b_now || now_s;
            b_counted := b_counted || 0;
            cur_at := cur_at + 1;
            keys := '{}';
            key_items := '{}';
        END IF;
        IF st_hash[i] IS NOT NULL THEN
            o_outcome[i] := 'replay'; o_hash[i] := st_hash[i]; o_resp[i] := st_resp[i]; o_status[i] := st_status[i];
            CONTINUE;
        END IF;
        IF rs_devices[i] > p_s_end[i] - coalesce(p_s_end[i - 1], 0) THEN
            o_outcome[i] := 'render';
            CONTINUE;
        END IF;
        -- The same key earlier in this batch: this push is its retry.
        j := CASE WHEN p_key[i] IS NOT NULL THEN array_position(keys, p_key[i]) END;
        IF j IS NOT NULL THEN
            dup_of[i] := key_items[j];
            o_outcome[i] := 'replay'; o_hash[i] := p_body_hash[key_items[j]]; o_resp[i] := rs_response[key_items[j]];
            o_status[i] := 202;
            CONTINUE;
        END IF;
        IF NOT (minute_count < p_per_minute[i] AND day_count < p_per_day[i]) THEN
            o_outcome[i] := 'limited';
            o_mc[i] := minute_count;
            o_mo[i] := coalesce(minute_oldest, CASE WHEN b_counted[cur_at] > 0 THEN now_s END);
            o_dc[i] := day_count;
            o_do[i] := coalesce(day_oldest, CASE WHEN b_counted[cur_at] > 0 THEN now_s / 60 END);
            o_now[i] := now_s;
            CONTINUE;
        END IF;
        minute_count := minute_count + 1;
        day_count := day_count + 1;
        b_counted[cur_at] := b_counted[cur_at] + 1;
        b_of[i] := cur_at;
        acc := acc || i;
        IF p_key[i] IS NOT NULL THEN
            keys := keys || p_key[i];
            key_items := key_items || i;
        END IF;
        o_outcome[i] := 'accepted'; o_resp[i] := rs_response[i];
    END LOOP;

    -- 4. The keys, in one statement. One that another transaction stored meanwhile (a
    --    multi-device push or an activity with the same key) makes its push, and its retries in
    --    this batch, a replay of that answer, and its slot is not counted.
    WITH stored AS (
        INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
        SELECT p_partner[a], p_key[a], p_body_hash[a], p_request[a], rs_response[a], p_created[a]
          FROM unnest(acc) AS a WHERE p_key[a] IS NOT NULL
        ON CONFLICT (partner_id, key) DO UPDATE
           SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
               response = EXCLUDED.response, created_at = EXCLUDED.created_at, status = EXCLUDED.status
         WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours'
        RETURNING k.request_id
    )
    SELECT array_agg(a) INTO lost FROM unnest(acc) AS a
     WHERE p_key[a] IS NOT NULL AND p_request[a] NOT IN (SELECT s.request_id FROM stored s);
    IF lost IS NOT NULL THEN
        FOREACH i IN ARRAY lost LOOP
            SELECT k.body_hash, k.response, k.status INTO rec FROM idempotency_keys k
             WHERE k.partner_id = p_partner[i] AND k.key = p_key[i];
            FOR j IN SELECT x.o FROM unnest(dup_of) WITH ORDINALITY AS x (d, o) WHERE x.o = i OR x.d = i LOOP
                o_outcome[j] := 'replay'; o_hash[j] := rec.body_hash; o_resp[j] := rec.response; o_status[j] := rec.status;
            END LOOP;
            b_counted[b_of[i]] := b_counted[b_of[i]] - 1;
        END LOOP;
        acc := ARRAY(SELECT a FROM unnest(acc) AS a WHERE a <> ALL (lost));
    END IF;

    -- 5. The counts, once per partner, and the accepted pushes' rows, one statement per table.
    --    Partner traffic is lane 0; a delivery is due at sendAt, or at once.
    INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
    SELECT x.p, g.granularity, CASE g.granularity WHEN 's' THEN x.t ELSE x.t / 60 END, x.c
      FROM unnest(b_partner, b_now, b_counted) AS x (p, t, c), (VALUES ('s'::"char"), ('m'::"char")) AS g (granularity)
     WHERE x.c > 0
    ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + EXCLUDED.count;
    IF cardinality(acc) > 0 THEN
        INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
            deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
        SELECT p_request[a], p_created[a], p_partner[a], p_mini_app[a], p_key[a], p_title[a], p_body[a],
               p_deep_link[a], p_data[a]::jsonb, p_send_at[a], p_ttl[a], p_expires[a], 0, rs_users[a],
               rs_devices[a], rs_suppressed[a], rs_missing[a]::jsonb
          FROM unnest(acc) AS a;
        INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
        SELECT u, p_mini_app[a], p_created[a] FROM unnest(acc) AS a, unnest(rs_user_ids[a]::text[]) AS u
        ON CONFLICT DO NOTHING;
        INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id,
            device_id, environment, payload, available_at, expires_at)
        SELECT p_delivery[s.slot], p_request[a], p_created[a], p_partner[a], 0, d.service, d.user_id, d.device,
               d.env, CASE d.service WHEN 'apns' THEN p_apns[s.slot] ELSE p_fcm[s.slot] END,
               coalesce(p_send_at[a], p_created[a]), p_expires[a]
          FROM unnest(acc) AS a
         CROSS JOIN LATERAL unnest(rs_d_user[a]::text[], rs_d_device[a]::text[], rs_d_service[a]::text[],
                                   rs_d_env[a]::text[]) WITH ORDINALITY AS d (user_id, device, service, env, k)
         CROSS JOIN LATERAL (SELECT coalesce(p_s_end[a - 1], 0) + d.k::integer AS slot) AS s;
    END IF;

    RETURN QUERY
    SELECT g.i, o_outcome[g.i], o_hash[g.i], o_resp[g.i], o_status[g.i], o_mc[g.i], o_mo[g.i], o_dc[g.i],
           o_do[g.i], o_now[g.i], rs_devices[g.i]
      FROM generate_series(1, n) AS g (i);
END
$$;


--
-- Name: herald_iso8601(timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_iso8601(p_time timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;


--
-- Name: herald_push_completed_event(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_push_completed_event() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM partners p WHERE p.id = NEW.partner_id AND p.webhook_url IS NOT NULL) THEN
        PERFORM herald_webhook_event(NEW.partner_id, 'push.completed', NEW.id, 'requestId', NEW.sent, NEW.failed,
                                     NEW.suppressed);
    END IF;
    RETURN NULL;
END
$$;


--
-- Name: herald_put_device(text, text, text, text, text, text, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_put_device(p_user text, p_device text, p_platform text, p_environment text, p_bundle text, p_apns text, p_push_to_start text, p_fcm text) RETURNS TABLE(created boolean, taken integer)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_token   text;
    v_created boolean;
    v_taken   integer := 0;
    v_rows    integer;
BEGIN
    FOR v_token IN SELECT DISTINCT t FROM unnest(ARRAY[p_apns, p_push_to_start, p_fcm]) AS t
                    WHERE t IS NOT NULL ORDER BY t LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_token, 7307));
    END LOOP;

    IF p_apns IS NOT NULL THEN
        UPDATE devices SET apns_token = NULL, apns_token_invalidated_at = NULL, updated_at = now()
         WHERE apns_token = p_apns AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_push_to_start IS NOT NULL THEN
        UPDATE devices SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL,
                           updated_at = now()
         WHERE apns_push_to_start_token = p_push_to_start AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_fcm IS NOT NULL THEN
        UPDATE devices SET fcm_token = NULL, fcm_token_invalidated_at = NULL, updated_at = now()
         WHERE fcm_token = p_fcm AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;

    INSERT INTO devices AS d (user_id, device_id, platform, environment, bundle_id, apns_token,
                              apns_push_to_start_token, fcm_token)
    VALUES (p_user, p_device, p_platform, p_environment, p_bundle, p_apns, p_push_to_start, p_fcm)
    ON CONFLICT (user_id, device_id) DO UPDATE SET
        platform = EXCLUDED.platform,
        environment = EXCLUDED.environment,
        bundle_id = EXCLUDED.bundle_id,
        apns_token = EXCLUDED.apns_token,
        apns_token_invalidated_at = CASE WHEN d.apns_token IS DISTINCT FROM EXCLUDED.apns_token
            THEN NULL ELSE d.apns_token_invalidated_at END,
        apns_push_to_start_token = EXCLUDED.apns_push_to_start_token,
        apns_push_to_start_invalidated_at = CASE
            WHEN d.apns_push_to_start_token IS DISTINCT FROM EXCLUDED.apns_push_to_start_token
            THEN NULL ELSE d.apns_push_to_start_invalidated_at END,
        fcm_token = EXCLUDED.fcm_token,
        fcm_token_invalidated_at = CASE WHEN d.fcm_token IS DISTINCT FROM EXCLUDED.fcm_token
            THEN NULL ELSE d.fcm_token_invalidated_at END,
        updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    RETURN QUERY SELECT v_created, v_taken;
END
$$;


--
-- Name: herald_put_user(text, text, text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_put_user(p_user text, p_tenant text, p_emails text[], p_wallets text[]) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_created boolean;
    v_owned   integer;
BEGIN
    INSERT INTO tenants (id) VALUES (p_tenant) ON CONFLICT DO NOTHING;
    INSERT INTO users AS u (id, tenant_id) VALUES (p_user, p_tenant)
    ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    DELETE FROM user_emails WHERE user_id = p_user AND email <> ALL(p_emails);
    IF cardinality(p_emails) > 0 THEN
        INSERT INTO user_emails (tenant_id, email, user_id) SELECT p_tenant, v, p_user FROM unnest(p_emails) AS v
        ON CONFLICT DO NOTHING;
        SELECT count(*) INTO v_owned FROM user_emails
         WHERE tenant_id = p_tenant AND user_id = p_user AND email = ANY(p_emails);
        IF v_owned <> cardinality(p_emails) THEN
            RAISE unique_violation USING MESSAGE = 'identifier_taken';
        END IF;
    END IF;

    DELETE FROM user_wallets WHERE user_id = p_user AND wallet <> ALL(p_wallets);
    IF cardinality(p_wallets) > 0 THEN
        INSERT INTO user_wallets (tenant_id, wallet, user_id) SELECT p_tenant, v, p_user FROM unnest(p_wallets) AS v
        ON CONFLICT DO NOTHING;
        SELECT count(*) INTO v_owned FROM user_wallets
         WHERE tenant_id = p_tenant AND user_id = p_user AND wallet = ANY(p_wallets);
        IF v_owned <> cardinality(p_wallets) THEN
            RAISE unique_violation USING MESSAGE = 'identifier_taken';
        END IF;
    END IF;
    RETURN v_created;
END
$$;


--
-- Name: herald_queue_heads(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_queue_heads() RETURNS TABLE(lane smallint, partner_id uuid, oldest_available_at timestamp with time zone)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
    WITH RECURSIVE heads AS (
        (SELECT d.lane, d.partner_id FROM deliveries d
          WHERE d.state = 'pending' ORDER BY d.lane, d.partner_id LIMIT 1)
        UNION ALL
        SELECT n.lane, n.partner_id FROM heads h,
               LATERAL (SELECT d.lane, d.partner_id FROM deliveries d
                         WHERE d.state = 'pending' AND (d.lane, d.partner_id) > (h.lane, h.partner_id)
                         ORDER BY d.lane, d.partner_id LIMIT 1) n
    )
    SELECT h.lane, h.partner_id,
           (SELECT d.available_at FROM deliveries d
             WHERE d.state = 'pending' AND d.lane = h.lane AND d.partner_id = h.partner_id
             ORDER BY d.available_at LIMIT 1)
      FROM heads h
$$;


--
-- Name: herald_rate_refund(uuid, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_rate_refund(p_partner uuid, p_seconds bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    UPDATE rate_buckets SET count = count - 1
     WHERE partner_id = p_partner AND count > 0
       AND ((granularity = 's' AND bucket = p_seconds) OR (granularity = 'm' AND bucket = p_seconds / 60));
END
$$;


--
-- Name: herald_rate_reserve(uuid, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_rate_reserve(p_partner uuid, p_per_minute integer, p_per_day integer, OUT admitted boolean, OUT minute_count integer, OUT minute_oldest bigint, OUT day_count integer, OUT day_oldest bigint, OUT now_seconds bigint) RETURNS record
    LANGUAGE plpgsql
    AS $$
DECLARE
    now_minute bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    now_seconds := floor(extract(epoch FROM clock_timestamp()));
    now_minute := now_seconds / 60;
    SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO minute_count, minute_oldest
      FROM rate_buckets b
     WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > now_seconds - 60;
    SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO day_count, day_oldest
      FROM rate_buckets b
     WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > now_minute - 1440;
    admitted := minute_count < p_per_minute AND day_count < p_per_day;
    IF admitted THEN
        INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
        VALUES (p_partner, 's', now_seconds, 1), (p_partner, 'm', now_minute, 1)
        ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + 1;
    END IF;
END
$$;


--
-- Name: herald_resolve_recipients(text, text[], text[], text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_resolve_recipients(p_tenant text, p_emails text[], p_wallets text[], p_mini_app text) RETURNS TABLE(kind text, ident text, user_id text, service text, environment text, opted_out boolean)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
BEGIN
    -- Already NFC when the intake sent them: a cheap check per email. (Reassigned in place so the
    -- query below stays the one Tests/StoreTests/QueryPlanTests.swift EXPLAINs.)
    p_emails := ARRAY(SELECT CASE WHEN x IS NFC NORMALIZED THEN x ELSE normalize(x, NFC) END
                        FROM unnest(p_emails) AS x);
    RETURN QUERY
    WITH ids AS (
        SELECT 'e'::text AS kind, e.email AS ident, e.user_id FROM user_emails e
         WHERE e.tenant_id = p_tenant AND e.email = ANY(p_emails)
        UNION ALL
        SELECT 'w', w.wallet, w.user_id FROM user_wallets w
         WHERE w.tenant_id = p_tenant AND w.wallet = ANY(p_wallets)
    ), targets AS (
        SELECT u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_app) AS opted_out
          FROM (SELECT DISTINCT ids.user_id FROM ids) AS u
    )
    SELECT ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean FROM ids
    UNION ALL
    SELECT 'u', NULL, t.user_id, NULL, NULL, t.opted_out FROM targets t
    UNION ALL
    SELECT 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment, NULL
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
END
$$;


--
-- Name: herald_uuid_v7(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_uuid_v7() RETURNS uuid
    LANGUAGE sql PARALLEL SAFE
    AS $$
    -- 48 bits of UNIX milliseconds, then a version-4 UUID's random bits with the version nibble set to 7
    -- (its variant bits are already 0b10), the layout of Sources/HeraldCore/UUIDv7.swift.
    SELECT encode(set_byte(overlay(r.b PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                                                        FROM 3) FROM 1 FOR 6),
                           6, (get_byte(r.b, 6) & 15) | 112), 'hex')::uuid
      FROM (SELECT uuid_send(gen_random_uuid()) AS b) r
$$;


--
-- Name: herald_webhook_claim(text, integer, integer, uuid[], integer[], integer, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_webhook_claim(p_worker text, p_limit integer, p_per_partner integer, p_room_partners uuid[], p_rooms integer[], p_lease_seconds integer, p_now timestamp with time zone) RETURNS TABLE(id uuid, partner_id uuid, body text, attempts integer, window_start timestamp with time zone, url text, secret text)
    LANGUAGE sql
    AS $$
    WITH full_partners AS (
        SELECT coalesce(array_agg(r.partner), '{}') AS ids
          FROM unnest(p_room_partners, p_rooms) AS r (partner, room)
         WHERE r.room <= 0
    ), due AS (
        (SELECT e.id, e.partner_id, e.available_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'pending' AND e.available_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.available_at
          LIMIT p_limit * 4)
        UNION ALL
        (SELECT e.id, e.partner_id, e.lease_expires_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'sending' AND e.lease_expires_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.lease_expires_at
          LIMIT p_limit * 4)
    ), ranked AS (
        SELECT d.id, d.available_at,
               row_number() OVER (PARTITION BY d.partner_id ORDER BY d.available_at, d.id) AS rank,
               coalesce(r.room, p_per_partner) AS room
          FROM due d
          LEFT JOIN unnest(p_room_partners, p_rooms) AS r (partner, room) ON r.partner = d.partner_id
    ), picked AS (
        SELECT e.id
          FROM webhook_events e
         WHERE e.id IN (SELECT k.id FROM ranked k WHERE k.rank <= k.room ORDER BY k.available_at LIMIT p_limit)
           AND (e.state = 'pending' OR (e.state = 'sending' AND e.lease_expires_at <= p_now))
           FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_events e
       SET state = 'sending', leased_by = p_worker, attempts = e.attempts + 1,
           lease_expires_at = p_now + make_interval(secs => p_lease_seconds)
      FROM picked k, partners p
     WHERE e.id = k.id AND p.id = e.partner_id
    RETURNING e.id, e.partner_id, e.body, e.attempts, e.window_start, p.webhook_url, p.webhook_secret
$$;


--
-- Name: herald_webhook_event(uuid, text, uuid, text, integer, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_webhook_event(p_partner uuid, p_type text, p_subject uuid, p_subject_key text, p_sent integer, p_failed integer, p_suppressed integer) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_id  uuid := gen_random_uuid();
    v_now timestamptz := clock_timestamp();
BEGIN
    INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, available_at)
    SELECT v_id, p.id, p_type, p_subject,
           json_build_object('type', p_type, 'id', v_id, p_subject_key, p_subject, 'sent', p_sent,
                             'failed', p_failed, 'suppressed', p_suppressed,
                             'completedAt', herald_iso8601(v_now))::text,
           v_now, v_now, v_now
      FROM partners p
     WHERE p.id = p_partner AND p.webhook_url IS NOT NULL;
END
$$;


--
-- Name: herald_webhook_record(text, uuid[], text[], integer[], text[], timestamp with time zone[], timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_webhook_record(p_worker text, p_ids uuid[], p_outcomes text[], p_statuses integer[], p_errors text[], p_retry_at timestamp with time zone[], p_now timestamp with time zone) RETURNS integer
    LANGUAGE sql
    AS $$
    WITH done AS (
        UPDATE webhook_events e
           SET state = CASE o.outcome WHEN 'retry' THEN 'pending' ELSE o.outcome END,
               available_at = CASE o.outcome WHEN 'retry' THEN o.retry_at ELSE e.available_at END,
               finished_at = CASE o.outcome WHEN 'retry' THEN NULL ELSE p_now END,
               last_status = o.status, last_error = o.error, leased_by = NULL, lease_expires_at = NULL
          FROM unnest(p_ids, p_outcomes, p_statuses, p_errors, p_retry_at) AS o (id, outcome, status, error, retry_at)
         WHERE e.id = o.id AND e.state = 'sending' AND e.leased_by = p_worker
        RETURNING 1)
    SELECT count(*)::integer FROM done
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: backfill_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.backfill_keys (
    partner_id uuid NOT NULL,
    key text NOT NULL,
    request_id uuid NOT NULL,
    run_id uuid NOT NULL,
    line integer NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: deliveries; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.deliveries (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    request_created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint DEFAULT 0 NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    environment text NOT NULL,
    payload text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    available_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    lease_expires_at timestamp with time zone,
    leased_by text,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    activity_id uuid,
    activity_event text,
    priority smallint,
    member_count integer DEFAULT 1 NOT NULL,
    members uuid[],
    member_users text[],
    member_devices text[],
    member_payloads text[],
    members_done integer[],
    CONSTRAINT deliveries_activity_event_check CHECK ((activity_event = ANY (ARRAY['start'::text, 'update'::text, 'end'::text]))),
    CONSTRAINT deliveries_environment CHECK ((environment = ANY (ARRAY['production'::text, 'sandbox'::text]))),
    CONSTRAINT deliveries_members_shape CHECK ((((members IS NULL) = (member_count = 1)) AND ((members IS NULL) OR (activity_id IS NULL)))),
    CONSTRAINT deliveries_service_check CHECK ((service = ANY (ARRAY['apns'::text, 'fcm'::text]))),
    CONSTRAINT deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'leased'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000', autovacuum_vacuum_insert_scale_factor='0.05', autovacuum_vacuum_cost_delay='0', autovacuum_analyze_scale_factor='0.02', fillfactor='100');


--
-- Name: delivery_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
)
PARTITION BY RANGE (finished_at);
ALTER TABLE ONLY public.delivery_history ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_2026_11; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history_2026_11 (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
);
ALTER TABLE ONLY public.delivery_history_2026_11 ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_11 ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_11 ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_11 ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_2026_12; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history_2026_12 (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
);
ALTER TABLE ONLY public.delivery_history_2026_12 ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_12 ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_12 ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2026_12 ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_2027_01; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history_2027_01 (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
);
ALTER TABLE ONLY public.delivery_history_2027_01 ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_01 ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_01 ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_01 ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_2027_02; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history_2027_02 (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
);
ALTER TABLE ONLY public.delivery_history_2027_02 ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_02 ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_02 ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_02 ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_2027_03; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.delivery_history_2027_03 (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text, 'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text])))
);
ALTER TABLE ONLY public.delivery_history_2027_03 ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_03 ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_03 ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY public.delivery_history_2027_03 ALTER COLUMN member_devices SET STATISTICS 0;


--
-- Name: delivery_history_deliveries; Type: VIEW; Schema: public; Owner: -
--

CREATE VIEW public.delivery_history_deliveries AS
 SELECT COALESCE(m.id, h.id) AS id,
    h.request_id,
    h.request_created_at,
    h.partner_id,
    h.lane,
    h.service,
    COALESCE(m.user_id, h.user_id) AS user_id,
    COALESCE(m.device_id, h.device_id) AS device_id,
    h.outcome,
    h.attempts,
    h.last_error,
    h.created_at,
    h.finished_at,
    h.activity_event,
    h.payload,
    h.replayed_at,
        CASE
            WHEN (h.members IS NOT NULL) THEN h.id
            ELSE NULL::uuid
        END AS group_id
   FROM (public.delivery_history h
     LEFT JOIN LATERAL UNNEST(h.members, h.member_users, h.member_devices) m(id, user_id, device_id) ON (true));


--
-- Name: devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.devices (
    user_id text NOT NULL,
    device_id text NOT NULL,
    platform text NOT NULL,
    environment text NOT NULL,
    bundle_id text,
    apns_token text,
    apns_token_invalidated_at timestamp with time zone,
    apns_push_to_start_token text,
    apns_push_to_start_invalidated_at timestamp with time zone,
    fcm_token text,
    fcm_token_invalidated_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT devices_environment_check CHECK ((environment = ANY (ARRAY['production'::text, 'sandbox'::text]))),
    CONSTRAINT devices_platform_check CHECK ((platform = ANY (ARRAY['ios'::text, 'android'::text])))
);


--
-- Name: idempotency_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.idempotency_keys (
    partner_id uuid NOT NULL,
    key text NOT NULL,
    body_hash text NOT NULL,
    request_id uuid NOT NULL,
    response text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    status smallint DEFAULT 202 NOT NULL
)
WITH (autovacuum_analyze_scale_factor='0.02', autovacuum_analyze_threshold='200');


--
-- Name: live_activities; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activities (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    user_id text NOT NULL,
    template text NOT NULL,
    attributes jsonb NOT NULL,
    state jsonb NOT NULL,
    start_alert jsonb NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    last_timestamp bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    dismiss_at timestamp with time zone,
    apns_update_payload text,
    apns_update_priority smallint,
    apns_end_payload text NOT NULL,
    fcm_end_payload text NOT NULL,
    end_timestamp bigint NOT NULL,
    CONSTRAINT live_activities_status_check CHECK ((status = ANY (ARRAY['active'::text, 'ended'::text, 'replaced'::text, 'expired'::text]))),
    CONSTRAINT live_activities_template_check CHECK ((template = ANY (ARRAY['progress'::text, 'status'::text, 'countdown'::text])))
)
WITH (autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_scale_factor='0.05');


--
-- Name: live_activity_targets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_targets (
    activity_id uuid NOT NULL,
    device_id text NOT NULL,
    service text NOT NULL,
    update_token text,
    update_token_invalidated_at timestamp with time zone,
    held_event text,
    CONSTRAINT live_activity_targets_held_event_check CHECK ((held_event = ANY (ARRAY['update'::text, 'end'::text]))),
    CONSTRAINT live_activity_targets_service_check CHECK ((service = ANY (ARRAY['apns'::text, 'fcm'::text])))
);


--
-- Name: mini_app_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.mini_app_sessions (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    last_seen_at timestamp with time zone NOT NULL
);


--
-- Name: opt_outs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.opt_outs (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    opted_out_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: partner_icons; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.partner_icons (
    partner_id uuid NOT NULL,
    size integer NOT NULL,
    png bytea NOT NULL,
    sha256 text NOT NULL,
    CONSTRAINT partner_icons_size_check CHECK ((size = ANY (ARRAY[64, 128, 256])))
);


--
-- Name: partners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.partners (
    id uuid NOT NULL,
    mini_app_id text NOT NULL,
    display_name text NOT NULL,
    tenant_id text NOT NULL,
    key_hash text NOT NULL,
    rate_limit_per_minute integer NOT NULL,
    rate_limit_per_day integer NOT NULL,
    icon_url text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    icon_updated_at timestamp with time zone,
    webhook_url text,
    webhook_secret text,
    CONSTRAINT partners_rate_limit_per_day_check CHECK ((rate_limit_per_day > 0)),
    CONSTRAINT partners_rate_limit_per_minute_check CHECK ((rate_limit_per_minute > 0)),
    CONSTRAINT partners_webhook_pair CHECK (((webhook_url IS NULL) = (webhook_secret IS NULL)))
);


--
-- Name: push_requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
)
PARTITION BY RANGE (created_at);


--
-- Name: push_requests_2026_11; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests_2026_11 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
);


--
-- Name: push_requests_2026_12; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests_2026_12 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
);


--
-- Name: push_requests_2027_01; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests_2027_01 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
);


--
-- Name: push_requests_2027_02; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests_2027_02 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
);


--
-- Name: push_requests_2027_03; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_requests_2027_03 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL
);


--
-- Name: rate_buckets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_buckets (
    partner_id uuid NOT NULL,
    granularity "char" NOT NULL,
    bucket bigint NOT NULL,
    count integer NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: tenants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tenants (
    id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: user_emails; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_emails (
    tenant_id text NOT NULL,
    email text NOT NULL,
    user_id text NOT NULL
);


--
-- Name: user_senders; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_senders (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    first_sent_at timestamp with time zone NOT NULL
);


--
-- Name: user_wallets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_wallets (
    tenant_id text NOT NULL,
    wallet text NOT NULL,
    user_id text NOT NULL
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    tenant_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: webhook_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.webhook_events (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    type text NOT NULL,
    subject_id uuid NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    window_start timestamp with time zone NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    available_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    leased_by text,
    lease_expires_at timestamp with time zone,
    last_status integer,
    last_error text,
    finished_at timestamp with time zone,
    CONSTRAINT webhook_events_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'sending'::text, 'delivered'::text, 'failed'::text]))),
    CONSTRAINT webhook_events_type_check CHECK ((type = ANY (ARRAY['push.completed'::text, 'activity.ended'::text, 'activity.expired'::text])))
);


--
-- Name: delivery_history_2026_11; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.delivery_history ATTACH PARTITION public.delivery_history_2026_11 FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00');


--
-- Name: delivery_history_2026_12; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.delivery_history ATTACH PARTITION public.delivery_history_2026_12 FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2027-01-01 00:00:00+00');


--
-- Name: delivery_history_2027_01; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.delivery_history ATTACH PARTITION public.delivery_history_2027_01 FOR VALUES FROM ('2027-01-01 00:00:00+00') TO ('2027-02-01 00:00:00+00');


--
-- Name: delivery_history_2027_02; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.delivery_history ATTACH PARTITION public.delivery_history_2027_02 FOR VALUES FROM ('2027-02-01 00:00:00+00') TO ('2027-03-01 00:00:00+00');


--
-- Name: delivery_history_2027_03; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.delivery_history ATTACH PARTITION public.delivery_history_2027_03 FOR VALUES FROM ('2027-03-01 00:00:00+00') TO ('2027-04-01 00:00:00+00');


--
-- Name: push_requests_2026_11; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests ATTACH PARTITION public.push_requests_2026_11 FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00');


--
-- Name: push_requests_2026_12; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests ATTACH PARTITION public.push_requests_2026_12 FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2027-01-01 00:00:00+00');


--
-- Name: push_requests_2027_01; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests ATTACH PARTITION public.push_requests_2027_01 FOR VALUES FROM ('2027-01-01 00:00:00+00') TO ('2027-02-01 00:00:00+00');


--
-- Name: push_requests_2027_02; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests ATTACH PARTITION public.push_requests_2027_02 FOR VALUES FROM ('2027-02-01 00:00:00+00') TO ('2027-03-01 00:00:00+00');


--
-- Name: push_requests_2027_03; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests ATTACH PARTITION public.push_requests_2027_03 FOR VALUES FROM ('2027-03-01 00:00:00+00') TO ('2027-04-01 00:00:00+00');


--
-- Data for Name: backfill_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: deliveries; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: delivery_history_2026_11; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: delivery_history_2026_12; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: delivery_history_2027_01; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: delivery_history_2027_02; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: delivery_history_2027_03; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: devices; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: idempotency_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activities; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_targets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: mini_app_sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: opt_outs; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: partner_icons; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: partners; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_requests_2026_11; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_requests_2026_12; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_requests_2027_01; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_requests_2027_02; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_requests_2027_03; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: rate_buckets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES (1, '001_directory.sql', '69d4cdf12e39d6d3', '2026-12-07 11:19:13.661458+00');
INSERT INTO public.schema_migrations VALUES (2, '002_partners.sql', '92fc620800e48afd', '2026-12-07 11:19:14.141435+00');
INSERT INTO public.schema_migrations VALUES (3, '003_requests.sql', 'ed0c2bc6c1a049ac', '2026-12-07 11:19:14.397472+00');
INSERT INTO public.schema_migrations VALUES (4, '004_outbox.sql', 'f914414f778fe5a2', '2026-12-07 11:19:14.763561+00');
INSERT INTO public.schema_migrations VALUES (5, '005_push_functions.sql', '7e422f8b5107c10d', '2026-12-07 11:19:15.105268+00');
INSERT INTO public.schema_migrations VALUES (6, '006_worker.sql', 'b0d2c37cb826cee5', '2026-12-07 11:19:15.192435+00');
INSERT INTO public.schema_migrations VALUES (7, '007_edges.sql', '83cb22ccaadaff9c', '2026-12-07 11:19:15.445587+00');
INSERT INTO public.schema_migrations VALUES (8, '008_setup_faults.sql', '5642669976c46a8a', '2026-12-07 11:19:15.748957+00');
INSERT INTO public.schema_migrations VALUES (9, '009_live_activities.sql', '76087494f5c4c922', '2026-12-07 11:19:15.846116+00');
INSERT INTO public.schema_migrations VALUES (10, '010_operations.sql', 'a74d97a99149add', '2026-12-07 11:19:16.105536+00');
INSERT INTO public.schema_migrations VALUES (11, '011_backfill.sql', 'b3efea7effcb2e82', '2026-12-07 11:19:16.353499+00');
INSERT INTO public.schema_migrations VALUES (12, '012_claim_bulk_limit.sql', '2eaf8f416ceff061', '2026-12-07 11:19:16.539544+00');
INSERT INTO public.schema_migrations VALUES (13, '013_intake_push.sql', '8e4abce37d92014a', '2026-12-07 11:19:16.733457+00');
INSERT INTO public.schema_migrations VALUES (14, '014_drain.sql', '7319411ae53ce8cf', '2026-12-07 11:19:16.849544+00');
INSERT INTO public.schema_migrations VALUES (15, '015_delivery_costs.sql', '8ee9f73221b406bc', '2026-12-07 11:19:17.285599+00');
INSERT INTO public.schema_migrations VALUES (16, '016_delivery_groups.sql', '39498566d697e3c4', '2026-12-07 11:19:17.445485+00');
INSERT INTO public.schema_migrations VALUES (17, '017_claim_one_scan.sql', '72c2083f41cb05f7', '2026-12-07 11:19:18.084481+00');
INSERT INTO public.schema_migrations VALUES (18, '018_groups_sent_whole.sql', 'acea7ac6af3eeb78', '2026-12-07 11:19:18.44943+00');
INSERT INTO public.schema_migrations VALUES (19, '019_partner_icons.sql', '38f90b09f98b5ce', '2026-12-07 11:19:18.797452+00');
INSERT INTO public.schema_migrations VALUES (20, '020_webhooks.sql', 'be8ed694cb015167', '2026-12-07 11:19:19.261463+00');
INSERT INTO public.schema_migrations VALUES (21, '021_intake_push_slots.sql', '57826090efa0af9b', '2026-12-07 11:19:19.74144+00');
INSERT INTO public.schema_migrations VALUES (22, '022_claim_opt_out_once.sql', 'f3ec836b95f54a84', '2026-12-07 11:19:20.115083+00');
INSERT INTO public.schema_migrations VALUES (23, '023_history_arrays_without_statistics.sql', '949c4e91ce645c84', '2026-12-07 11:19:20.373466+00');
INSERT INTO public.schema_migrations VALUES (24, '024_outbox_full_pages.sql', '3b9560a6cf2f3c3d', '2026-12-07 11:19:20.853452+00');
INSERT INTO public.schema_migrations VALUES (25, '025_request_counts_by_key.sql', 'f26d25c138ec1069', '2026-12-07 11:19:21.237433+00');
INSERT INTO public.schema_migrations VALUES (26, '026_webhook_events_only_with_webhook.sql', '516d655ca17b9a82', '2026-12-07 11:19:21.653448+00');


--
-- Data for Name: tenants; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_emails; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_senders; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: user_wallets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: webhook_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: backfill_keys backfill_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.backfill_keys
    ADD CONSTRAINT backfill_keys_pkey PRIMARY KEY (partner_id, key);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);


--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (user_id, device_id);


--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (partner_id, key);


--
-- Name: live_activities live_activities_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activities
    ADD CONSTRAINT live_activities_pkey PRIMARY KEY (id);


--
-- Name: live_activity_targets live_activity_targets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_targets
    ADD CONSTRAINT live_activity_targets_pkey PRIMARY KEY (activity_id, device_id);


--
-- Name: mini_app_sessions mini_app_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mini_app_sessions
    ADD CONSTRAINT mini_app_sessions_pkey PRIMARY KEY (user_id, mini_app_id);


--
-- Name: opt_outs opt_outs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.opt_outs
    ADD CONSTRAINT opt_outs_pkey PRIMARY KEY (user_id, mini_app_id);


--
-- Name: partner_icons partner_icons_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partner_icons
    ADD CONSTRAINT partner_icons_pkey PRIMARY KEY (partner_id, size);


--
-- Name: partners partners_key_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partners
    ADD CONSTRAINT partners_key_hash_key UNIQUE (key_hash);


--
-- Name: partners partners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partners
    ADD CONSTRAINT partners_pkey PRIMARY KEY (id);


--
-- Name: push_requests push_requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests
    ADD CONSTRAINT push_requests_pkey PRIMARY KEY (id, created_at);


--
-- Name: push_requests_2026_11 push_requests_2026_11_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests_2026_11
    ADD CONSTRAINT push_requests_2026_11_pkey PRIMARY KEY (id, created_at);


--
-- Name: push_requests_2026_12 push_requests_2026_12_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests_2026_12
    ADD CONSTRAINT push_requests_2026_12_pkey PRIMARY KEY (id, created_at);


--
-- Name: push_requests_2027_01 push_requests_2027_01_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests_2027_01
    ADD CONSTRAINT push_requests_2027_01_pkey PRIMARY KEY (id, created_at);


--
-- Name: push_requests_2027_02 push_requests_2027_02_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests_2027_02
    ADD CONSTRAINT push_requests_2027_02_pkey PRIMARY KEY (id, created_at);


--
-- Name: push_requests_2027_03 push_requests_2027_03_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_requests_2027_03
    ADD CONSTRAINT push_requests_2027_03_pkey PRIMARY KEY (id, created_at);


--
-- Name: rate_buckets rate_buckets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_buckets
    ADD CONSTRAINT rate_buckets_pkey PRIMARY KEY (partner_id, granularity, bucket);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: tenants tenants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tenants
    ADD CONSTRAINT tenants_pkey PRIMARY KEY (id);


--
-- Name: user_emails user_emails_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_emails
    ADD CONSTRAINT user_emails_pkey PRIMARY KEY (tenant_id, email);


--
-- Name: user_senders user_senders_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_senders
    ADD CONSTRAINT user_senders_pkey PRIMARY KEY (user_id, mini_app_id);


--
-- Name: user_wallets user_wallets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_wallets
    ADD CONSTRAINT user_wallets_pkey PRIMARY KEY (tenant_id, wallet);


--
-- Name: users users_id_tenant_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_id_tenant_id_key UNIQUE (id, tenant_id);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: webhook_events webhook_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);


--
-- Name: deliveries_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_activity ON public.deliveries USING btree (activity_id, device_id) WHERE (activity_id IS NOT NULL);


--
-- Name: deliveries_due_partner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_due_partner ON public.deliveries USING btree (lane, partner_id, available_at, member_count) WHERE (state = 'pending'::text);


--
-- Name: deliveries_lease; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_lease ON public.deliveries USING btree (lease_expires_at) WHERE (state = 'leased'::text);


--
-- Name: delivery_history_replayable; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_replayable ON ONLY public.delivery_history USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_11_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_11_finished_at_idx ON public.delivery_history_2026_11 USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_finished ON ONLY public.delivery_history USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_2026_11_finished_at_idx1; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_11_finished_at_idx1 ON public.delivery_history_2026_11 USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_replayable_partner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_replayable_partner ON ONLY public.delivery_history USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_11_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_11_partner_id_finished_at_idx ON public.delivery_history_2026_11 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_request; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_request ON ONLY public.delivery_history USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_11_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_11_request_id_idx ON public.delivery_history_2026_11 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_12_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_12_finished_at_idx ON public.delivery_history_2026_12 USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_12_finished_at_idx1; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_12_finished_at_idx1 ON public.delivery_history_2026_12 USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_2026_12_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_12_partner_id_finished_at_idx ON public.delivery_history_2026_12 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2026_12_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_12_request_id_idx ON public.delivery_history_2026_12 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_01_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_01_finished_at_idx ON public.delivery_history_2027_01 USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_01_finished_at_idx1; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_01_finished_at_idx1 ON public.delivery_history_2027_01 USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_2027_01_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_01_partner_id_finished_at_idx ON public.delivery_history_2027_01 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_01_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_01_request_id_idx ON public.delivery_history_2027_01 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_02_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_02_finished_at_idx ON public.delivery_history_2027_02 USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_02_finished_at_idx1; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_02_finished_at_idx1 ON public.delivery_history_2027_02 USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_2027_02_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_02_partner_id_finished_at_idx ON public.delivery_history_2027_02 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_02_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_02_request_id_idx ON public.delivery_history_2027_02 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_03_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_finished_at_idx ON public.delivery_history_2027_03 USING btree (finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_03_finished_at_idx1; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_finished_at_idx1 ON public.delivery_history_2027_03 USING brin (finished_at) WITH (pages_per_range='32');


--
-- Name: delivery_history_2027_03_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_partner_id_finished_at_idx ON public.delivery_history_2027_03 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_03_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_request_id_idx ON public.delivery_history_2027_03 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: devices_apns_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX devices_apns_token ON public.devices USING hash (apns_token) WHERE (apns_token IS NOT NULL);


--
-- Name: devices_fcm_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX devices_fcm_token ON public.devices USING hash (fcm_token) WHERE (fcm_token IS NOT NULL);


--
-- Name: devices_push_to_start_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX devices_push_to_start_token ON public.devices USING hash (apns_push_to_start_token) WHERE (apns_push_to_start_token IS NOT NULL);


--
-- Name: idempotency_keys_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);


--
-- Name: live_activities_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activities_due ON public.live_activities USING btree (expires_at) WHERE (status = 'active'::text);


--
-- Name: live_activities_ended; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activities_ended ON public.live_activities USING btree (ended_at) WHERE (status <> 'active'::text);


--
-- Name: live_activities_one_active; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX live_activities_one_active ON public.live_activities USING btree (user_id, mini_app_id) WHERE (status = 'active'::text);


--
-- Name: partners_active_mini_app; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX partners_active_mini_app ON public.partners USING btree (mini_app_id) WHERE (revoked_at IS NULL);


--
-- Name: user_emails_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_emails_user ON public.user_emails USING btree (user_id);


--
-- Name: user_wallets_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX user_wallets_user ON public.user_wallets USING btree (user_id);


--
-- Name: webhook_events_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_events_due ON public.webhook_events USING btree (available_at) WHERE (state = 'pending'::text);


--
-- Name: webhook_events_failed; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_events_failed ON public.webhook_events USING btree (partner_id, finished_at) WHERE (state = 'failed'::text);


--
-- Name: webhook_events_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_events_finished ON public.webhook_events USING btree (finished_at) WHERE (state = ANY (ARRAY['delivered'::text, 'failed'::text]));


--
-- Name: webhook_events_sending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX webhook_events_sending ON public.webhook_events USING btree (lease_expires_at) WHERE (state = 'sending'::text);


--
-- Name: delivery_history_2026_11_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2026_11_finished_at_idx;


--
-- Name: delivery_history_2026_11_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2026_11_finished_at_idx1;


--
-- Name: delivery_history_2026_11_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2026_11_partner_id_finished_at_idx;


--
-- Name: delivery_history_2026_11_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2026_11_request_id_idx;


--
-- Name: delivery_history_2026_12_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2026_12_finished_at_idx;


--
-- Name: delivery_history_2026_12_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2026_12_finished_at_idx1;


--
-- Name: delivery_history_2026_12_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2026_12_partner_id_finished_at_idx;


--
-- Name: delivery_history_2026_12_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2026_12_request_id_idx;


--
-- Name: delivery_history_2027_01_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2027_01_finished_at_idx;


--
-- Name: delivery_history_2027_01_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2027_01_finished_at_idx1;


--
-- Name: delivery_history_2027_01_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2027_01_partner_id_finished_at_idx;


--
-- Name: delivery_history_2027_01_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2027_01_request_id_idx;


--
-- Name: delivery_history_2027_02_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2027_02_finished_at_idx;


--
-- Name: delivery_history_2027_02_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2027_02_finished_at_idx1;


--
-- Name: delivery_history_2027_02_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2027_02_partner_id_finished_at_idx;


--
-- Name: delivery_history_2027_02_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2027_02_request_id_idx;


--
-- Name: delivery_history_2027_03_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2027_03_finished_at_idx;


--
-- Name: delivery_history_2027_03_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2027_03_finished_at_idx1;


--
-- Name: delivery_history_2027_03_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2027_03_partner_id_finished_at_idx;


--
-- Name: delivery_history_2027_03_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2027_03_request_id_idx;


--
-- Name: push_requests_2026_11_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2026_11_pkey;


--
-- Name: push_requests_2026_12_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2026_12_pkey;


--
-- Name: push_requests_2027_01_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_01_pkey;


--
-- Name: push_requests_2027_02_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_02_pkey;


--
-- Name: push_requests_2027_03_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_03_pkey;


--
-- Name: live_activities live_activities_finished; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER live_activities_finished AFTER UPDATE OF status ON public.live_activities FOR EACH ROW WHEN (((old.status = 'active'::text) AND (new.status = ANY (ARRAY['ended'::text, 'expired'::text])))) EXECUTE FUNCTION public.herald_activity_finished_event();


--
-- Name: push_requests push_requests_completed_on_insert; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER push_requests_completed_on_insert AFTER INSERT ON public.push_requests FOR EACH ROW WHEN ((new.deliveries = 0)) EXECUTE FUNCTION public.herald_push_completed_event();


--
-- Name: push_requests push_requests_completed_on_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER push_requests_completed_on_update AFTER UPDATE OF sent, failed ON public.push_requests FOR EACH ROW WHEN ((((new.sent + new.failed) >= new.deliveries) AND ((old.sent + old.failed) < old.deliveries))) EXECUTE FUNCTION public.herald_push_completed_event();


--
-- Name: user_emails user_emails_nfc; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER user_emails_nfc BEFORE INSERT OR UPDATE OF email ON public.user_emails FOR EACH ROW EXECUTE FUNCTION public.herald_email_nfc();


--
-- Name: devices devices_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: live_activities live_activities_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activities
    ADD CONSTRAINT live_activities_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: live_activity_targets live_activity_targets_activity_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_targets
    ADD CONSTRAINT live_activity_targets_activity_id_fkey FOREIGN KEY (activity_id) REFERENCES public.live_activities(id) ON DELETE CASCADE;


--
-- Name: mini_app_sessions mini_app_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.mini_app_sessions
    ADD CONSTRAINT mini_app_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: opt_outs opt_outs_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.opt_outs
    ADD CONSTRAINT opt_outs_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: partner_icons partner_icons_partner_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partner_icons
    ADD CONSTRAINT partner_icons_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES public.partners(id);


--
-- Name: partners partners_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partners
    ADD CONSTRAINT partners_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id);


--
-- Name: user_emails user_emails_user_id_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_emails
    ADD CONSTRAINT user_emails_user_id_tenant_id_fkey FOREIGN KEY (user_id, tenant_id) REFERENCES public.users(id, tenant_id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: user_senders user_senders_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_senders
    ADD CONSTRAINT user_senders_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: user_wallets user_wallets_user_id_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_wallets
    ADD CONSTRAINT user_wallets_user_id_tenant_id_fkey FOREIGN KEY (user_id, tenant_id) REFERENCES public.users(id, tenant_id) ON UPDATE CASCADE ON DELETE CASCADE;


--
-- Name: users users_tenant_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES public.tenants(id);


--
-- PostgreSQL database dump complete
--


