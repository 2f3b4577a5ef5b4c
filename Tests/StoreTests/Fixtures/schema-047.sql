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
-- Name: delivery_activity_event; Type: DOMAIN; Schema: public; Owner: -
--

CREATE DOMAIN public.delivery_activity_event AS text
	CONSTRAINT delivery_activity_event_known CHECK ((VALUE = ANY (ARRAY['start'::text, 'update'::text, 'end'::text])));


--
-- Name: delivery_environment; Type: DOMAIN; Schema: public; Owner: -
--

CREATE DOMAIN public.delivery_environment AS text
	CONSTRAINT delivery_environment_known CHECK ((VALUE = ANY (ARRAY['production'::text, 'sandbox'::text])));


--
-- Name: delivery_service; Type: DOMAIN; Schema: public; Owner: -
--

CREATE DOMAIN public.delivery_service AS text
	CONSTRAINT delivery_service_known CHECK ((VALUE = ANY (ARRAY['apns'::text, 'fcm'::text])));


--
-- Name: delivery_state; Type: DOMAIN; Schema: public; Owner: -
--

CREATE DOMAIN public.delivery_state AS text
	CONSTRAINT delivery_state_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'leased'::text])));


--
-- Name: herald_activity_alert_spend(timestamp with time zone[], timestamp with time zone, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_alert_spend(p_alerted timestamp with time zone[], p_now timestamp with time zone, p_limit integer) RETURNS timestamp with time zone[]
    LANGUAGE sql STABLE
    AS $$
    SELECT CASE WHEN cardinality(w.kept) < p_limit THEN w.kept || p_now END
      FROM (SELECT coalesce(array_agg(t ORDER BY t), '{}') AS kept
              FROM unnest(p_alerted) AS t
             WHERE t > p_now - interval '1 hour') w
$$;


--
-- Name: herald_activity_audience(text, text, text, text, timestamp with time zone, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_audience(p_tenant text, p_email text, p_wallet text, p_mini_app text, p_session_since timestamp with time zone, p_template text) RETURNS TABLE(user_id text, has_session boolean, opted_out boolean, devices text, old_id uuid, old_template text, old_attributes text, old_state text, old_last_timestamp bigint, old_created_at timestamp with time zone, old_expires_at timestamp with time zone)
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
             AND ((d.platform = 'ios'
                   AND CASE WHEN EXISTS (SELECT 1 FROM device_push_to_start_tokens p
                                          WHERE p.user_id = d.user_id AND p.device_id = d.device_id
                                            AND p.template = p_template)
                            THEN EXISTS (SELECT 1 FROM device_push_to_start_tokens p
                                          WHERE p.user_id = d.user_id AND p.device_id = d.device_id
                                            AND p.template = p_template AND p.invalidated_at IS NULL)
                            ELSE d.apns_push_to_start_token IS NOT NULL AND d.apns_push_to_start_invalidated_at IS NULL
                       END)
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
-- Name: herald_activity_device_state(uuid, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_device_state(p_id uuid, p_device text, p_state text) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_status text;
    v_held uuid;
    v_superseded uuid[];
BEGIN
    SELECT a.status INTO v_status FROM live_activities a WHERE a.id = p_id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    SELECT t.held_event_id INTO v_held FROM live_activity_targets t
     WHERE t.activity_id = p_id AND t.device_id = p_device;
    UPDATE live_activity_targets t
       SET device_state = p_state, device_state_at = now(),
           held_event = CASE WHEN p_state IN ('dismissed', 'ended') THEN NULL ELSE t.held_event END,
           held_event_id = CASE WHEN p_state IN ('dismissed', 'ended') THEN NULL ELSE t.held_event_id END
     WHERE t.activity_id = p_id AND t.device_id = p_device;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF p_state IN ('dismissed', 'ended') THEN
        WITH dropped AS (
            DELETE FROM deliveries d
             WHERE d.activity_id = p_id AND d.device_id = p_device AND d.state = 'pending'
            RETURNING d.*
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at, activity_event,
                                          request_created_at)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, 'superseded', attempts,
                   'dismissed_on_device', created_at, now(), activity_event, request_created_at
              FROM dropped
        )
        SELECT coalesce(array_agg(activity_event_id) FILTER (WHERE activity_event_id IS NOT NULL), '{}')
          INTO v_superseded FROM dropped;
        IF v_held IS NOT NULL THEN
            v_superseded := v_superseded || v_held;
        END IF;
        IF cardinality(v_superseded) > 0 THEN
            PERFORM herald_activity_event_counts(v_superseded, NULL, NULL,
                                                 array_fill(1, ARRAY[cardinality(v_superseded)]));
        END IF;
        IF v_status = 'active' AND herald_activity_settle(p_id) THEN
            v_status := 'dismissed';
        END IF;
    END IF;
    RETURN v_status;
END
$$;


--
-- Name: herald_activity_dispatch(uuid[], text, text[], text[], text[], text[], smallint[], timestamp with time zone[], text, smallint, uuid[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_dispatch(p_ids uuid[], p_event text, p_apns text[], p_apns_start text[], p_fcm text[], p_fcm_start text[], p_priorities smallint[], p_expires timestamp with time zone[], p_device text DEFAULT NULL::text, p_lane smallint DEFAULT 0, p_events uuid[] DEFAULT NULL::uuid[]) RETURNS TABLE(o_activity uuid, o_apns integer, o_fcm integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_superseded uuid[];
    v_activities uuid[];
    v_apns       integer[];
    v_fcm        integer[];
BEGIN
    WITH x AS (
        SELECT * FROM unnest(p_ids, coalesce(p_events, array_fill(NULL::uuid, ARRAY[cardinality(p_ids)])), p_apns,
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
           -- gets nothing more (functions/activity_device_state.sql).
           AND (t.device_state IS NULL OR t.device_state IN ('active', 'stale'))
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
               v.environment, CASE t.service WHEN 'apns' THEN t.apns ELSE t.fcm END, now(), t.expires, a.id,
               p_event, CASE t.service WHEN 'apns' THEN t.priority END, t.event_id
          FROM t JOIN live_activities a ON a.id = t.activity_id
          JOIN devices v ON v.user_id = a.user_id AND v.device_id = t.device_id
         WHERE (t.service = 'fcm' OR t.has_token)
           AND NOT EXISTS (SELECT 1 FROM pend p WHERE p.activity_id = t.activity_id AND p.device_id = t.device_id)
        RETURNING activity_id, service
    ), held AS (
        -- An end outranks an update: an update never takes the place of a held end.
        UPDATE live_activity_targets lt
           SET held_event = CASE WHEN p_event = 'end' OR lt.held_event = 'end' THEN 'end' ELSE 'update' END,
               held_event_id = CASE WHEN p_event = 'end' OR lt.held_event IS DISTINCT FROM 'end' THEN t.event_id
                                    ELSE lt.held_event_id END
          FROM t
         WHERE lt.activity_id = t.activity_id AND lt.device_id = t.device_id AND t.service = 'apns' AND NOT t.has_token
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
    RETURN QUERY
    SELECT i.id, coalesce(c.apns, 0), coalesce(c.fcm, 0)
      FROM unnest(p_ids) AS i (id)
      LEFT JOIN unnest(v_activities, v_apns, v_fcm) AS c (id, apns, fcm) ON c.id = i.id;
END
$$;


--
-- Name: herald_activity_end(uuid, text, text, text, uuid, integer, timestamp with time zone, jsonb, timestamp with time zone, bigint, text, text, smallint, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_end(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer, p_now timestamp with time zone, p_state jsonb, p_dismiss timestamp with time zone, p_timestamp bigint, p_apns text, p_fcm text, p_priority smallint, p_alert_title text DEFAULT NULL::text, p_dismiss_given timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_refusal text;
    v_created timestamptz;
    v_event uuid;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    UPDATE live_activities
       SET state = p_state, status = 'ended', version = version + 1, last_timestamp = p_timestamp,
           end_timestamp = p_timestamp, updated_at = p_now, ended_at = p_now, dismiss_at = p_dismiss,
           apns_end_payload = p_apns, fcm_end_payload = p_fcm, apns_end_priority = p_priority
     WHERE id = p_id
    RETURNING created_at INTO v_created;
    v_event := herald_uuid_v7();
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, alert_title, dismiss_at,
                                      idempotency_key, devices_apns, devices_fcm)
    SELECT v_event, herald_uuid_v7_time(v_event), p_id, p_partner, 'end', p_state, p_alert_title, p_dismiss_given,
           p_key, d.o_apns, d.o_fcm
      FROM herald_activity_dispatch(ARRAY[p_id], 'end', ARRAY[p_apns], NULL, ARRAY[p_fcm], NULL,
                                    ARRAY[p_priority], ARRAY[v_created + interval '12 hours'],
                                    p_events => ARRAY[v_event]) d;
    RETURN 'ended_now';
END
$$;


--
-- Name: herald_activity_event_counts(uuid[], integer[], integer[], integer[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_event_counts(p_events uuid[], p_sent integer[], p_failed integer[], p_superseded integer[]) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
BEGIN
    WITH counts AS (
        SELECT c.id, herald_uuid_v7_time(c.id) AS created_at, sum(coalesce(c.sent, 0)) AS sent,
               sum(coalesce(c.failed, 0)) AS failed, sum(coalesce(c.superseded, 0)) AS superseded
          FROM unnest(p_events, p_sent, p_failed, p_superseded) AS c (id, sent, failed, superseded)
         WHERE c.id IS NOT NULL
         GROUP BY c.id
         ORDER BY c.id
    ), locked AS (
        SELECT e.id, e.created_at, c.sent, c.failed, c.superseded
          FROM counts c
         CROSS JOIN LATERAL (SELECT x.id, x.created_at FROM live_activity_events x
                              WHERE x.id = c.id AND x.created_at = c.created_at
                                FOR UPDATE) e
    )
    UPDATE live_activity_events e
       SET sent = e.sent + l.sent, failed = e.failed + l.failed, superseded = e.superseded + l.superseded
      FROM locked l
     WHERE e.id = l.id AND e.created_at = l.created_at
       -- Bounds the scan of e to the events counted, whatever join the plan makes.
       AND e.id = ANY (p_events);
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
-- Name: herald_activity_settle(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_settle(p_id uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
BEGIN
    UPDATE live_activities a
       SET status = 'dismissed', ended_at = now(), updated_at = now(), version = a.version + 1
     WHERE a.id = p_id AND a.status = 'active'
       AND NOT EXISTS (SELECT 1 FROM live_activity_targets t
                        WHERE t.activity_id = p_id AND (t.device_state IS NULL OR t.device_state IN ('active', 'stale')));
    RETURN FOUND;
END
$$;


--
-- Name: herald_activity_start(uuid, text, text, text, uuid, timestamp with time zone, text, text, text, jsonb, jsonb, jsonb, timestamp with time zone, bigint, text, text, bigint, text[], text[], text[], text, text, uuid, text, text, bigint, smallint, integer, integer, integer, integer, text, integer, uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_start(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamp with time zone, p_mini_app text, p_user text, p_template text, p_attributes jsonb, p_state jsonb, p_start_alert jsonb, p_expires timestamp with time zone, p_timestamp bigint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint, p_devices text[], p_services text[], p_environments text[], p_apns_start text, p_fcm_start text, p_old uuid, p_old_apns_end text, p_old_fcm_end text, p_old_timestamp bigint, p_relevance smallint, p_max_active integer, p_starts_per_user integer, p_starts_per_app integer, p_alerted_limit integer, p_alert_title text DEFAULT NULL::text, p_ttl_seconds integer DEFAULT NULL::integer, p_channel uuid DEFAULT NULL::uuid, OUT result text, OUT reason text, OUT retry_after integer, OUT replaced_priority smallint) RETURNS record
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
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
    v_event       uuid;
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
         WHERE a.id = v_old.id
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at, a.partner_id, a.state, a.channel_id
             INTO v_old;
        -- An activity that follows a channel has no update token to end it by: the new start takes its place.
        IF v_old.channel_id IS NULL THEN
            v_event := herald_uuid_v7();
            INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, devices_apns,
                                              devices_fcm)
            SELECT v_event, herald_uuid_v7_time(v_event), v_old.id, v_old.partner_id, 'replace-end', v_old.state,
                   d.o_apns, d.o_fcm
              FROM herald_activity_dispatch(ARRAY[v_old.id], 'end', ARRAY[v_old.apns_end_payload], NULL,
                                            ARRAY[v_old.fcm_end_payload], NULL, ARRAY[v_priority],
                                            ARRAY[v_old.created_at + interval '12 hours'], p_events => ARRAY[v_event]) d;
        END IF;
    END IF;

    INSERT INTO live_activities (id, partner_id, mini_app_id, user_id, template, attributes, state, start_alert,
                                 last_timestamp, created_at, updated_at, expires_at, apns_end_payload,
                                 fcm_end_payload, end_timestamp, relevance_score, channel_id)
    VALUES (p_id, p_partner, p_mini_app, p_user, p_template, p_attributes, p_state, p_start_alert, p_timestamp,
            p_now, p_now, p_expires, p_apns_end, p_fcm_end, p_end_timestamp, p_relevance, p_channel);
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
    result := 'started';
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
       SET update_token = p_token, update_token_invalidated_at = NULL, held_event = NULL, held_event_id = NULL,
           -- A token proves the activity exists after all: an unconfirmed device is back.
           device_state = CASE WHEN device_state = 'unconfirmed' THEN NULL ELSE device_state END
     WHERE activity_id = p_id AND device_id = p_device;
    IF v_target.held_event IS NULL THEN
        RETURN 'stored';
    END IF;
    -- The released row delivers the held event (its audit row counted this device when it was held).
    IF v_target.held_event = 'end' THEN
        PERFORM herald_activity_dispatch(ARRAY[p_id], 'end', ARRAY[v_activity.apns_end_payload], NULL,
                                         ARRAY[v_activity.fcm_end_payload], NULL, ARRAY[v_activity.apns_end_priority],
                                         ARRAY[v_activity.created_at + interval '12 hours'], p_device,
                                         p_events => ARRAY[v_target.held_event_id]);
    ELSE
        PERFORM herald_activity_dispatch(ARRAY[p_id], 'update', ARRAY[v_activity.apns_update_payload], NULL,
                                         ARRAY[NULL::text], NULL,
                                         ARRAY[coalesce(v_activity.apns_update_priority, 5::smallint)],
                                         ARRAY[v_activity.expires_at], p_device,
                                         p_events => ARRAY[v_target.held_event_id]);
    END IF;
    RETURN 'sent';
END
$$;


--
-- Name: herald_activity_unconfirmed(integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_unconfirmed(p_seconds integer, p_limit integer) RETURNS integer
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_due    record;
    v_marked integer := 0;
    v_held   uuid;
BEGIN
    FOR v_due IN
        SELECT t.activity_id, t.device_id FROM live_activity_targets t
         WHERE t.service = 'apns' AND t.update_token IS NULL AND t.device_state IS NULL AND t.start_sent_at IS NOT NULL
           AND t.start_sent_at <= now() - make_interval(secs => p_seconds)
           -- A phone that follows a channel gets no update token: only its own word tells.
           AND NOT EXISTS (SELECT 1 FROM live_activities a WHERE a.id = t.activity_id AND a.channel_id IS NOT NULL)
         ORDER BY t.start_sent_at
         LIMIT p_limit
    LOOP
        PERFORM 1 FROM live_activities a WHERE a.id = v_due.activity_id FOR UPDATE SKIP LOCKED;
        CONTINUE WHEN NOT FOUND;
        -- Read under the activity's lock: no change of it can move the held event meanwhile.
        SELECT t.held_event_id INTO v_held FROM live_activity_targets t
         WHERE t.activity_id = v_due.activity_id AND t.device_id = v_due.device_id;
        UPDATE live_activity_targets t
           SET device_state = 'unconfirmed', device_state_at = now(), held_event = NULL, held_event_id = NULL
         WHERE t.activity_id = v_due.activity_id AND t.device_id = v_due.device_id
           AND t.update_token IS NULL AND t.device_state IS NULL;
        CONTINUE WHEN NOT FOUND;
        v_marked := v_marked + 1;
        IF v_held IS NOT NULL THEN
            PERFORM herald_activity_event_counts(ARRAY[v_held], NULL, NULL, ARRAY[1]);
        END IF;
        PERFORM herald_activity_settle(v_due.activity_id);
    END LOOP;
    RETURN v_marked;
END
$$;


--
-- Name: herald_activity_update(uuid, text, text, text, uuid, integer, timestamp with time zone, jsonb, timestamp with time zone, bigint, text, text, text, text, smallint, text, text, bigint, smallint, integer, text, text, text, jsonb, text, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_activity_update(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer, p_now timestamp with time zone, p_state jsonb, p_expires timestamp with time zone, p_timestamp bigint, p_apns text, p_apns_start text, p_fcm text, p_fcm_start text, p_priority smallint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint, p_relevance smallint, p_alerted_limit integer, p_apns_silent text, p_fcm_silent text, p_response_silent text, p_patch jsonb DEFAULT NULL::jsonb, p_alert_title text DEFAULT NULL::text, p_ttl_seconds integer DEFAULT NULL::integer) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_refusal  text;
    v_alerted  timestamptz[];
    v_spent    timestamptz[];
    v_silent   boolean := false;
    v_apns     text := p_apns;
    v_fcm      text := p_fcm;
    v_priority smallint := p_priority;
    v_event    uuid;
BEGIN
    v_refusal := herald_activity_begin_change(p_partner, p_id, p_version, p_key, p_body_hash, p_response, p_now);
    IF v_refusal IS NOT NULL THEN
        RETURN v_refusal;
    END IF;
    -- begin_change holds the row lock: no other change of this activity spends the budget meanwhile.
    SELECT a.alerted_at INTO v_alerted FROM live_activities a WHERE a.id = p_id;
    IF p_priority = 10 THEN
        v_spent := herald_activity_alert_spend(v_alerted, p_now, p_alerted_limit);
        IF v_spent IS NULL THEN
            v_silent := true;
            v_apns := p_apns_silent;
            v_fcm := p_fcm_silent;
            v_priority := 5;
            IF p_key IS NOT NULL THEN
                UPDATE idempotency_keys SET response = p_response_silent
                 WHERE partner_id = p_partner AND key = p_key;
            END IF;
        ELSE
            v_alerted := v_spent;
        END IF;
    END IF;
    UPDATE live_activities
       SET state = p_state, version = version + 1, last_timestamp = p_timestamp, updated_at = p_now,
           expires_at = p_expires, apns_update_payload = v_apns, apns_update_priority = v_priority,
           apns_end_payload = p_apns_end, fcm_end_payload = p_fcm_end, end_timestamp = p_end_timestamp,
           relevance_score = p_relevance, alerted_at = v_alerted
     WHERE id = p_id;
    v_event := herald_uuid_v7();
    INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, alert_title, ttl_seconds,
                                      idempotency_key, devices_apns, devices_fcm)
    SELECT v_event, herald_uuid_v7_time(v_event), p_id, p_partner, 'update', p_patch, p_alert_title, p_ttl_seconds,
           p_key, d.o_apns, d.o_fcm
      FROM herald_activity_dispatch(ARRAY[p_id], 'update', ARRAY[v_apns], ARRAY[p_apns_start], ARRAY[v_fcm],
                                    ARRAY[p_fcm_start], ARRAY[v_priority], ARRAY[p_expires],
                                    p_events => ARRAY[v_event]) d;
    RETURN CASE WHEN v_silent THEN 'updated_silent' ELSE 'updated' END;
END
$$;


--
-- Name: herald_admin_audit(text, uuid, text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_admin_audit(p_action text, p_partner uuid, p_mini_app text, p_detail jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_actor text := nullif(current_setting('herald.actor', true), '');
BEGIN
    INSERT INTO admin_audit (actor, actor_detail, client, action, partner_id, mini_app_id, detail)
    VALUES (coalesce(v_actor, 'database'),
            CASE WHEN v_actor IS NULL THEN current_user::text
                 ELSE nullif(current_setting('herald.actor_detail', true), '') END,
            nullif(current_setting('herald.client', true), ''),
            p_action, p_partner, p_mini_app, coalesce(p_detail, '{}'));
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
-- Name: herald_backfill_users(integer[], text[], text[], integer[], integer[], text[], integer[], integer[], text[], integer[], integer[], text[], text[], text[], text[], text[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_backfill_users(p_lines integer[], p_users text[], p_tenants text[], p_email_start integer[], p_email_count integer[], p_emails text[], p_wallet_start integer[], p_wallet_count integer[], p_wallets text[], p_device_start integer[], p_device_count integer[], p_device_ids text[], p_platforms text[], p_environments text[], p_bundles text[], p_apns text[], p_push_to_start text[], p_fcm text[], p_template_tokens text[]) RETURNS TABLE(line integer, outcome text, created boolean, devices integer)
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
                                          p_apns[j], p_push_to_start[j], p_fcm[j],
                                          p_template_tokens[j]::jsonb);
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
-- Name: herald_cancel_reminder(uuid, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_cancel_reminder(p_reminder uuid, p_user text) RETURNS text
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_reminder reminders%ROWTYPE;
    v_locked   integer;
BEGIN
    SELECT * INTO v_reminder FROM reminders r WHERE r.id = p_reminder AND r.user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF v_reminder.status <> 'scheduled' THEN
        RETURN v_reminder.status;
    END IF;
    SELECT count(*) INTO v_locked FROM (
        SELECT 1 FROM deliveries d
         WHERE d.id = ANY (v_reminder.deliveries) AND d.state = 'pending' AND d.attempts = 0
           FOR UPDATE) AS x;
    IF v_locked < cardinality(v_reminder.deliveries) THEN
        UPDATE reminders SET status = 'sent', finished_at = now() WHERE id = p_reminder;
        RETURN 'sent';
    END IF;
    DELETE FROM deliveries d WHERE d.id = ANY (v_reminder.deliveries);
    UPDATE push_requests p SET deliveries = p.deliveries - v_locked
     WHERE p.id = v_reminder.request_id AND p.created_at = v_reminder.request_created_at;
    UPDATE reminders SET status = 'cancelled', finished_at = now() WHERE id = p_reminder;
    RETURN 'cancelled';
END
$$;


--
-- Name: herald_channel_change(uuid, text, text, text, uuid, integer, timestamp with time zone, text, jsonb, bigint, text, smallint, text, timestamp with time zone, smallint, timestamp with time zone, jsonb, text, integer, timestamp with time zone, integer, text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_channel_change(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer, p_now timestamp with time zone, p_kind text, p_state jsonb, p_timestamp bigint, p_apns text, p_priority smallint, p_end_apns text, p_expires timestamp with time zone, p_relevance smallint, p_delete_at timestamp with time zone, p_patch jsonb DEFAULT NULL::jsonb, p_alert_title text DEFAULT NULL::text, p_ttl_given integer DEFAULT NULL::integer, p_dismiss_given timestamp with time zone DEFAULT NULL::timestamp with time zone, p_alerted_limit integer DEFAULT NULL::integer, p_apns_silent text DEFAULT NULL::text, p_response_silent text DEFAULT NULL::text) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_channel record;
    v_event uuid;
    v_unmade boolean;
    v_spent timestamptz[];
    v_silent boolean := false;
    v_apns text := p_apns;
    v_priority smallint := p_priority;
BEGIN
    SELECT c.status, c.version, c.expires_at, c.apns_channel_id, c.alerted_at INTO v_channel
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
           SET state = p_state, version = version + 1, last_timestamp = p_timestamp, apns_payload = v_apns,
               apns_priority = v_priority, apns_end_payload = p_end_apns, expires_at = p_expires,
               relevance_score = p_relevance, updated_at = p_now, next_at = p_now, alerted_at = v_spent
         WHERE id = p_id;
        -- The users' activities started from the channel follow its TTL.
        UPDATE live_activities a SET expires_at = p_expires, updated_at = p_now
         WHERE a.channel_id = p_id AND a.status = 'active' AND a.expires_at <> p_expires;
    END IF;
    v_event := herald_uuid_v7();
    INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, state, alert_title, ttl_seconds,
                                     dismiss_at, idempotency_key, version, outcome, finished_at)
    VALUES (v_event, herald_uuid_v7_time(v_event), p_id, p_partner, p_kind,
            CASE WHEN p_kind = 'end' THEN p_state ELSE p_patch END, p_alert_title, p_ttl_given, p_dismiss_given,
            p_key, p_version + 1,
            CASE WHEN v_unmade AND p_kind = 'end' THEN 'not_sent' ELSE 'pending' END,
            CASE WHEN v_unmade AND p_kind = 'end' THEN p_now END);
    RETURN CASE WHEN p_kind = 'end' THEN 'ended_now' WHEN v_silent THEN 'updated_silent' ELSE 'updated' END;
END
$$;


--
-- Name: herald_channel_claim(integer, integer, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_channel_claim(p_limit integer, p_lease_seconds integer, p_now timestamp with time zone) RETURNS TABLE(id uuid, status text, apns_channel_id text, environment text, version integer, sent_version integer, apns_payload text, apns_priority smallint, expires_at timestamp with time zone, delete_at timestamp with time zone, attempts integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_ids uuid[];
BEGIN
    SELECT coalesce(array_agg(d.id), '{}') INTO v_ids FROM (
        SELECT c.id FROM live_channels c
         WHERE c.status IN ('opening', 'open', 'ending') AND c.next_at <= p_now
           AND (c.leased_until IS NULL OR c.leased_until <= p_now)
         ORDER BY c.next_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED) d;
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;
    -- The TTL: the end rendered with the newest state replaces any change not broadcast yet.
    WITH expired AS (
        UPDATE live_channels c
           SET status = 'ending', version = c.version + 1, apns_payload = c.apns_end_payload, apns_priority = 5,
               ended_at = c.expires_at, delete_at = c.expires_at, updated_at = p_now,
               last_timestamp = greatest(c.last_timestamp + 1, extract(epoch FROM c.expires_at)::bigint),
               sent_version = CASE WHEN c.apns_channel_id IS NULL THEN c.version + 1 ELSE c.sent_version END
         WHERE c.id = ANY (v_ids) AND c.status IN ('opening', 'open') AND c.expires_at <= p_now
        RETURNING c.id, c.partner_id, c.state, c.version, c.apns_channel_id IS NULL AS unmade
    ), audit AS (
        SELECT herald_uuid_v7() AS event, e.* FROM expired e
    )
    INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, state, version, outcome,
                                     finished_at)
    SELECT a.event, herald_uuid_v7_time(a.event), a.id, a.partner_id, 'expire', a.state, a.version,
           CASE WHEN a.unmade THEN 'not_sent' ELSE 'pending' END, CASE WHEN a.unmade THEN p_now END
      FROM audit a;
    -- The users' activities started from a channel that just reached its TTL end with it.
    UPDATE live_activities a
       SET status = 'expired', ended_at = p_now, updated_at = p_now, dismiss_at = a.expires_at, version = a.version + 1
      FROM live_channels c
     WHERE c.id = ANY (v_ids) AND c.status = 'ending' AND a.channel_id = c.id AND a.status = 'active';
    RETURN QUERY
    UPDATE live_channels c
       SET leased_until = p_now + make_interval(secs => p_lease_seconds), attempts = c.attempts + 1
     WHERE c.id = ANY (v_ids)
    RETURNING c.id, c.status, c.apns_channel_id, c.environment, c.version, c.sent_version, c.apns_payload,
              c.apns_priority, c.expires_at, c.delete_at, c.attempts;
END
$$;


--
-- Name: herald_channel_open(uuid, text, text, text, uuid, timestamp with time zone, text, text, jsonb, jsonb, timestamp with time zone, bigint, smallint, text, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_channel_open(p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_now timestamp with time zone, p_mini_app text, p_template text, p_attributes jsonb, p_state jsonb, p_expires timestamp with time zone, p_timestamp bigint, p_relevance smallint, p_end_apns text, p_ttl_given integer, p_max_open integer) RETURNS text
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
DECLARE
    v_open integer;
    v_event uuid;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_live_channels:' || p_mini_app, 0));
    SELECT count(*) INTO v_open FROM live_channels c
     WHERE c.mini_app_id = p_mini_app AND c.status IN ('opening', 'open');
    IF v_open >= p_max_open THEN
        RETURN 'too_many_channels';
    END IF;
    IF NOT herald_activity_claim_key(p_partner, p_key, p_body_hash, p_id, p_response, 201::smallint, p_now) THEN
        RETURN 'duplicate';
    END IF;
    INSERT INTO live_channels (id, partner_id, mini_app_id, template, attributes, state, last_timestamp,
                               relevance_score, apns_end_payload, created_at, updated_at, expires_at, next_at)
    VALUES (p_id, p_partner, p_mini_app, p_template, p_attributes, p_state, p_timestamp, p_relevance, p_end_apns,
            p_now, p_now, p_expires, p_now);
    v_event := herald_uuid_v7();
    INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, state, ttl_seconds,
                                     idempotency_key, version)
    VALUES (v_event, herald_uuid_v7_time(v_event), p_id, p_partner, 'open', p_state, p_ttl_given, p_key, 1);
    RETURN 'opened';
END
$$;


--
-- Name: herald_channel_record(uuid, text, integer, text, timestamp with time zone, text, text, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_channel_record(p_id uuid, p_outcome text, p_version integer, p_reason text, p_retry_at timestamp with time zone, p_apns_channel_id text, p_environment text, p_now timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    SET enable_seqscan TO 'off'
    AS $$
BEGIN
    IF p_outcome = 'retry' THEN
        UPDATE live_channels SET leased_until = NULL, next_at = p_retry_at, failure = p_reason WHERE id = p_id;
        RETURN;
    END IF;
    IF p_outcome IN ('deleted', 'closed', 'gone') THEN
        UPDATE live_channels
           SET status = CASE WHEN p_outcome = 'gone' THEN 'failed' ELSE 'ended' END, leased_until = NULL,
               updated_at = p_now, failure = p_reason, attempts = 0
         WHERE id = p_id;
        UPDATE live_channel_events
           SET outcome = CASE WHEN p_outcome = 'gone' THEN 'failed' ELSE 'not_sent' END, reason = p_reason,
               finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending';
        RETURN;
    END IF;
    IF p_outcome = 'created' THEN
        UPDATE live_channels
           SET apns_channel_id = p_apns_channel_id, environment = p_environment,
               status = CASE WHEN status = 'opening' THEN 'open' ELSE status END
         WHERE id = p_id;
        UPDATE live_channel_events SET outcome = 'sent', finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending' AND version = 1;
    ELSIF p_outcome IN ('broadcast', 'refused') THEN
        UPDATE live_channels
           SET sent_version = greatest(sent_version, p_version),
               broadcasts = broadcasts + CASE WHEN p_outcome = 'broadcast' THEN 1 ELSE 0 END,
               failure = CASE WHEN p_outcome = 'refused' THEN p_reason END
         WHERE id = p_id;
        UPDATE live_channel_events
           SET outcome = CASE WHEN version < p_version THEN 'superseded'
                              WHEN p_outcome = 'broadcast' THEN 'sent' ELSE 'failed' END,
               reason = CASE WHEN version = p_version AND p_outcome = 'refused' THEN p_reason END,
               finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending' AND version <= p_version;
    END IF;
    UPDATE live_channels
       SET leased_until = NULL, attempts = 0,
           next_at = CASE WHEN version > sent_version OR (status = 'ending' AND apns_channel_id IS NOT NULL
                                                          AND delete_at IS NULL) THEN p_now
                          WHEN status = 'ending' THEN greatest(p_now, delete_at)
                          ELSE expires_at END
     WHERE id = p_id;
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
        -- The partners with a due row in this lane, with where each queue's live part starts, in one statement.
        -- A walk of deliveries_due_partner in partner order (a loose index scan, as functions/queue_heads.sql)
        -- visits the partners this worker has a cursor for (passed sorted) and, between them, the others that
        -- have a pending entry; then one probe each for a due row. So:
        -- - registered partners without pending rows cost nothing, however many there are (probing every
        --   partner took a claim of one row from 0.4 ms to 1.6 ms with 1,000 partners, 7.6 ms with 5,000);
        -- - a partner with a cursor is never entered at the head of its range, where the entries of the rows
        --   claimed since the last vacuum lie dead: its probe starts at its cursor, as the rounds' scans do;
        -- - another partner is entered once, at its first live entry, where its probe then starts.
        WITH RECURSIVE known AS MATERIALIZED (
            SELECT coalesce(array_agg(c.partner_id ORDER BY c.partner_id), '{}') AS ids,
                   coalesce(array_agg(c.cursor_time - interval '10 seconds' ORDER BY c.partner_id), '{}') AS floors
              FROM unnest(p_cursor_lanes, p_cursor_partners, p_cursor_times) AS c (lane, partner_id, cursor_time)
             WHERE c.lane = v_lane
        ), walk (id, next_known, floor, visited) AS (
            SELECT '00000000-0000-0000-0000-000000000000'::uuid, 1, NULL::timestamptz, false
            UNION ALL
            -- The next partner with a live entry before the next known one, else that known one.
            SELECT coalesce(o.id, k.ids[w.next_known]),
                   CASE WHEN o.id IS NULL THEN w.next_known + 1 ELSE w.next_known END,
                   CASE WHEN o.id IS NULL THEN k.floors[w.next_known] ELSE o.first END,
                   true
              FROM walk w
             CROSS JOIN known k
              LEFT JOIN LATERAL (
                  SELECT d.partner_id AS id, d.available_at AS first FROM deliveries d
                   WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id > w.id
                     -- No partner id is all ones (UUIDv4 and v7 carry a version digit).
                     AND d.partner_id < coalesce(k.ids[w.next_known], 'ffffffff-ffff-ffff-ffff-ffffffffffff')
                   ORDER BY d.partner_id, d.available_at
                   LIMIT 1) AS o ON true
             WHERE o.id IS NOT NULL OR w.next_known <= cardinality(k.ids)
        )
        SELECT coalesce(array_agg(p.id ORDER BY p.id), '{}'), coalesce(array_agg(p.floor ORDER BY p.id), '{}')
          INTO v_partners, v_floors
          FROM walk p
         -- A lateral probe with a limit, not EXISTS: the planner may make a semi-join of EXISTS a merge over
         -- the whole lane's index, which under a backlog of millions reads them all.
         CROSS JOIN LATERAL (SELECT 1 FROM deliveries d
                              WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id = p.id
                                AND d.available_at >= coalesce(p.floor, '-infinity')
                                AND d.available_at <= now() AND d.service = ANY (p_services)
                              LIMIT 1) AS due
         WHERE p.visited;

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

    -- Nothing claimed: starting the query below's plan (a dozen scans) would be most of an empty claim's cost.
    IF cardinality(v_claimed) = 0 THEN
        RETURN;
    END IF;

    -- The outbox's enumerated columns are domains (040_delivery_domains.sql), returned as the declared text.
    RETURN QUERY
    SELECT d.id, d.service::text, d.environment::text, d.payload, d.attempts, d.expires_at,
           -- The token the row is for: a push uses the device's, a Live Activity start the push-to-start
           -- token (its template's own when the host registered one, else the device's single one), its
           -- update and end the activity's own token (FCM: the device's token for all).
           CASE WHEN d.service = 'fcm' THEN v.fcm_token
                WHEN d.activity_event IS NULL THEN v.apns_token
                WHEN d.activity_event = 'start' THEN coalesce(p.token, v.apns_push_to_start_token)
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
               WHEN d.service = 'apns' AND d.activity_event = 'start' AND p.token IS NOT NULL
                    AND p.invalidated_at IS NOT NULL THEN 'token_invalid'
               WHEN d.service = 'apns' AND d.activity_event = 'start' AND p.token IS NULL
                    AND (v.apns_push_to_start_token IS NULL OR v.apns_push_to_start_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN d.service = 'apns' AND d.activity_event IN ('update', 'end')
                    AND (t.update_token IS NULL OR t.update_token_invalidated_at IS NOT NULL) THEN 'token_invalid'
               WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = d.user_id AND o.mini_app_id = d.mini_app_id)
                   THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id, d.activity_event::text, d.priority, d.group_id, d.member
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
      LEFT JOIN live_activity_targets t ON t.activity_id = d.activity_id AND t.device_id = d.device_id
      LEFT JOIN device_push_to_start_tokens p
             ON d.activity_event = 'start' AND p.user_id = d.user_id AND p.device_id = d.device_id
            AND p.template = a.template;
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
    -- The finished rows the follow-up statement needs (dead tokens, Live Activity rows), as a JSON array.
    v_follow_ups jsonb;
    v_member_finished bigint := 0;
    v_member_retried  bigint := 0;
    v_emptied  uuid[];
    -- Per request: what this batch adds to its sent and failed counts (rolled up once, at the end).
    v_c_requests uuid[] := '{}';
    v_c_created  timestamptz[] := '{}';
    v_c_sent     bigint[] := '{}';
    v_c_failed   bigint[] := '{}';
    -- Per Live Activity event: what this batch adds to its sent, failed and superseded counts. Pushes
    -- (activity_event_id NULL) add nothing here; an activity's rows add one primary-key probe per event.
    v_e_events     uuid[] := '{}';
    v_e_sent       integer[];
    v_e_failed     integer[];
    v_e_superseded integer[];
    -- Nearly every batch of a drain is all 'sent': then no row needs an error, a token or a retry
    -- time, and the id -> outcome map (a uuid-to-text conversion and a jsonb lookup per field and
    -- row, ~7% of the completion's CPU) is not built.
    v_all_sent boolean := p_outcomes <@ ARRAY['sent'];
    -- The groups of this batch, in id order: rows are locked in the order the lease extender's and
    -- the singles' `id = ANY (...)` scans take them, so two statements of one worker cannot deadlock.
    v_groups   uuid[] := '{}';
    v_singles  uuid[] := p_ids;
    -- Groups of which this batch holds every member, all sent, none done before (most of a drain's), in
    -- id order, with how many members each has here; and those of them deleted whole.
    v_whole        uuid[];
    v_whole_counts integer[];
    v_deleted      uuid[] := '{}';
BEGIN
    -- A statement only when some row is a group's (p_groups is NULL otherwise).
    IF p_groups IS NOT NULL THEN
        v_groups := (SELECT coalesce(array_agg(DISTINCT g ORDER BY g), '{}') FROM unnest(p_groups) g WHERE g IS NOT NULL);
    END IF;
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
            -- The verdict's time (retry_at) is when the token stopped being valid; a registration after it wins.
            UPDATE devices v
               SET apns_token_invalidated_at = CASE WHEN f.service = 'apns' THEN coalesce(f.retry_at, now())
                                                    ELSE v.apns_token_invalidated_at END,
                   apns_token_invalid_reason = CASE WHEN f.service = 'apns' THEN f.error ELSE v.apns_token_invalid_reason END,
                   fcm_token_invalidated_at = CASE WHEN f.service = 'fcm' THEN coalesce(f.retry_at, now())
                                                   ELSE v.fcm_token_invalidated_at END,
                   fcm_token_invalid_reason = CASE WHEN f.service = 'fcm' THEN f.error ELSE v.fcm_token_invalid_reason END,
                   updated_at = now()
              FROM finished_members f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL
               AND v.user_id = f.user_id AND v.device_id = f.device_id
               AND f.token = CASE WHEN f.service = 'fcm' THEN v.fcm_token ELSE v.apns_token END
               AND (v.registered_at IS NULL OR v.registered_at <= coalesce(f.retry_at, now()))
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
                      d.device_id, d.attempts, d.created_at, d.activity_id, d.activity_event, d.activity_event_id,
                      -- Only what `heraldctl replay` may send again keeps its bytes: sent rows (nearly all)
                      -- and Live Activity rows stay small.
                      CASE WHEN d.activity_id IS NULL AND NOT v_all_sent
                                AND v_meta -> (d.id::text) ->> 0 IN ('failed', 'dead', 'expired')
                           THEN d.payload END AS payload,
                      CASE WHEN v_all_sent THEN 'sent' ELSE v_meta -> (d.id::text) ->> 0 END AS outcome,
                      CASE WHEN NOT v_all_sent THEN v_meta -> (d.id::text) ->> 1 END AS error,
                      CASE WHEN NOT v_all_sent THEN v_meta -> (d.id::text) ->> 3 END AS token,
                      -- A dead token's verdict time (the retry time's slot): APNs' 410 timestamp, else the answer's.
                      CASE WHEN NOT v_all_sent THEN (v_meta -> (d.id::text) ->> 2)::timestamptz END AS verdict_at
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
        ), event_counts AS (
            SELECT activity_event_id,
                   (count(*) FILTER (WHERE outcome = 'sent'))::integer AS sent,
                   (count(*) FILTER (WHERE outcome NOT IN ('sent', 'superseded')))::integer AS failed,
                   (count(*) FILTER (WHERE outcome = 'superseded'))::integer AS superseded
              FROM finished WHERE activity_event_id IS NOT NULL GROUP BY activity_event_id
        )
        SELECT (SELECT count(*) FROM finished),
               -- The rows a follow-up statement has to look at: dead tokens, and Live Activity rows.
               (SELECT jsonb_agg(jsonb_build_object('service', f.service, 'user_id', f.user_id, 'device_id', f.device_id,
                                                    'outcome', f.outcome, 'error', f.error, 'token', f.token,
                                                    'verdict_at', f.verdict_at, 'activity_event', f.activity_event,
                                                    'activity_id', f.activity_id))
                  FROM finished f
                 WHERE f.activity_id IS NOT NULL OR (f.outcome = 'token_invalid' AND f.token IS NOT NULL)),
               v_c_requests || c.requests, v_c_created || c.created, v_c_sent || c.sent, v_c_failed || c.failed,
               e.events, e.sent, e.failed, e.superseded
          INTO v_finished, v_follow_ups, v_c_requests, v_c_created, v_c_sent, v_c_failed,
               v_e_events, v_e_sent, v_e_failed, v_e_superseded
          FROM (SELECT coalesce(array_agg(activity_event_id), '{}') AS events, array_agg(sent) AS sent,
                       array_agg(failed) AS failed, array_agg(superseded) AS superseded
                  FROM event_counts) e,
               (SELECT coalesce(array_agg(request_id), '{}') AS requests, coalesce(array_agg(request_created_at), '{}') AS created,
                       coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(failed), '{}') AS failed
                  FROM counts) c;
    END IF;

    -- What finished rows change beyond the outbox, in a statement of its own that most batches (pushes, all
    -- sent) skip: starting its five updates cost as much as the statement above.
    IF v_follow_ups IS NOT NULL THEN
        WITH finished AS (
            SELECT * FROM jsonb_to_recordset(v_follow_ups)
                AS f (service text, user_id text, device_id text, outcome text, error text, token text,
                      verdict_at timestamptz, activity_event text, activity_id uuid)
        ), dead_tokens AS (
            -- Only the token the row went to: a push's device token, a Live Activity start's push-to-start
            -- token, an FCM token; an activity's own token is the activity's (below), never the device's.
            -- The verdict's time is when the token stopped being valid; a registration after it wins.
            UPDATE devices v
               SET apns_token_invalidated_at = CASE WHEN f.service = 'apns' AND f.activity_event IS NULL
                                                    THEN coalesce(f.verdict_at, now()) ELSE v.apns_token_invalidated_at END,
                   apns_token_invalid_reason = CASE WHEN f.service = 'apns' AND f.activity_event IS NULL
                                                    THEN f.error ELSE v.apns_token_invalid_reason END,
                   apns_push_to_start_invalidated_at = CASE WHEN f.service = 'apns' AND f.activity_event = 'start'
                                                            THEN coalesce(f.verdict_at, now())
                                                            ELSE v.apns_push_to_start_invalidated_at END,
                   apns_push_to_start_invalid_reason = CASE WHEN f.service = 'apns' AND f.activity_event = 'start'
                                                            THEN f.error ELSE v.apns_push_to_start_invalid_reason END,
                   fcm_token_invalidated_at = CASE WHEN f.service = 'fcm' THEN coalesce(f.verdict_at, now())
                                                   ELSE v.fcm_token_invalidated_at END,
                   fcm_token_invalid_reason = CASE WHEN f.service = 'fcm' THEN f.error ELSE v.fcm_token_invalid_reason END,
                   updated_at = now()
              FROM finished f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL
               AND (f.service = 'fcm' OR f.activity_event IS NULL OR f.activity_event = 'start')
               AND v.user_id = f.user_id AND v.device_id = f.device_id
               AND (v.registered_at IS NULL OR v.registered_at <= coalesce(f.verdict_at, now()))
               AND f.token = CASE WHEN f.service = 'fcm' THEN v.fcm_token
                                  WHEN f.activity_event = 'start' THEN v.apns_push_to_start_token
                                  ELSE v.apns_token END
        ), dead_template_tokens AS (
            -- A start sent to its template's own push-to-start token (functions/put_device.sql): that token.
            UPDATE device_push_to_start_tokens p
               SET invalidated_at = coalesce(f.verdict_at, now()), invalid_reason = f.error
              FROM finished f JOIN devices v ON v.user_id = f.user_id AND v.device_id = f.device_id
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL AND f.service = 'apns'
               AND f.activity_event = 'start'
               AND p.user_id = f.user_id AND p.device_id = f.device_id AND p.token = f.token
               AND (v.registered_at IS NULL OR v.registered_at <= coalesce(f.verdict_at, now()))
        ), starts_sent AS (
            -- When a start reached the upstream: an iPhone's wait for its update token counts from it
            -- (functions/activity_unconfirmed.sql).
            UPDATE live_activity_targets t SET start_sent_at = now()
              FROM finished f
             WHERE f.outcome = 'sent' AND f.activity_event = 'start'
               AND t.activity_id = f.activity_id AND t.device_id = f.device_id AND t.start_sent_at IS NULL
        ), dead_activity_tokens AS (
            UPDATE live_activity_targets t SET update_token_invalidated_at = coalesce(f.verdict_at, now())
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
        SELECT count(*) INTO v_woken FROM next_activity_rows;
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
           AND r.id = ANY (v_c_requests)
           -- And to the months of their partitions: the bounds are found as the statement starts, so the other
           -- months' partitions are not searched for every id (an array parameter alone prunes nothing).
           AND r.created_at BETWEEN (SELECT min(c) FROM unnest(v_c_created) c)
                                AND (SELECT max(c) FROM unnest(v_c_created) c);
    END IF;

    IF cardinality(v_e_events) > 0 THEN
        PERFORM herald_activity_event_counts(v_e_events, v_e_sent, v_e_failed, v_e_superseded);
    END IF;

    RETURN QUERY SELECT v_finished + v_member_finished, v_retried + v_member_retried;
END
$$;


--
-- Name: herald_console_sessions_audit(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_console_sessions_audit() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM herald_admin_audit('console.signed_in', NULL, NULL, jsonb_build_object(
            'session', left(NEW.token_hash, 12), 'expiresAt', herald_iso8601(NEW.expires_at)));
    ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
        PERFORM herald_admin_audit('console.signed_out', NULL, NULL,
                                   jsonb_build_object('session', left(NEW.token_hash, 12)));
    END IF;
    RETURN NULL;
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
    v_partners uuid[];
    v_states  jsonb[];
    v_events  uuid[];
    v_expired integer;
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
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at, a.partner_id, a.state, a.channel_id
    )
    -- An activity that follows a broadcast channel ends with the channel's end, which reaches every follower in
    -- one broadcast (functions/channel_claim.sql): nothing is sent for it here.
    SELECT count(*), coalesce(array_agg(id) FILTER (WHERE channel_id IS NULL), '{}'),
           array_agg(apns_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(fcm_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(created_at + interval '12 hours') FILTER (WHERE channel_id IS NULL),
           array_agg(partner_id) FILTER (WHERE channel_id IS NULL), array_agg(state) FILTER (WHERE channel_id IS NULL),
           array_agg(herald_uuid_v7()) FILTER (WHERE channel_id IS NULL)
      INTO v_expired, v_ids, v_apns, v_fcm, v_expires, v_partners, v_states, v_events
      FROM done;
    IF cardinality(v_ids) > 0 THEN
        -- In the bulk lane: ends of a large sweep go out as fast as the workers have room beside realtime
        -- traffic, never ahead of it (a sweep of 100,000 activities must not stall pushes).
        INSERT INTO live_activity_events (id, created_at, activity_id, partner_id, kind, state, devices_apns,
                                          devices_fcm)
        SELECT e.id, herald_uuid_v7_time(e.id), e.activity_id, e.partner_id, 'expire', e.state, d.o_apns, d.o_fcm
          FROM herald_activity_dispatch(v_ids, 'end', v_apns, NULL, v_fcm, NULL,
                                        array_fill(5::smallint, ARRAY[cardinality(v_ids)]), v_expires, NULL,
                                        1::smallint, v_events) d
          JOIN unnest(v_ids, v_events, v_partners, v_states) AS e (activity_id, id, partner_id, state)
            ON e.activity_id = d.o_activity;
        PERFORM pg_notify('herald_deliveries', '');
    END IF;
    RETURN v_expired;
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
-- Name: herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamp with time zone[], text[], text[], uuid[], timestamp with time zone[], text[], text[], text[], text[], timestamp with time zone[], integer[], timestamp with time zone[], integer[], text[], text[], integer[], text[], text[], integer[], uuid[], text[], text[], text, text, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_intake_push(p_partner uuid[], p_per_minute integer[], p_per_day integer[], p_tenant text[], p_mini_app text[], p_now timestamp with time zone[], p_key text[], p_body_hash text[], p_request uuid[], p_created timestamp with time zone[], p_title text[], p_body text[], p_deep_link text[], p_data text[], p_send_at timestamp with time zone[], p_ttl integer[], p_expires timestamp with time zone[], p_e_line integer[], p_emails text[], p_e_json text[], p_w_line integer[], p_wallets text[], p_w_json text[], p_s_end integer[], p_delivery uuid[], p_apns text[], p_fcm text[], p_notify text, p_lease text DEFAULT NULL::text, p_lease_seconds integer DEFAULT NULL::integer, p_lease_listener integer DEFAULT NULL::integer) RETURNS TABLE(r_item integer, r_outcome text, r_body_hash text, r_response text, r_status integer, r_minute_count integer, r_minute_oldest bigint, r_day_count integer, r_day_oldest bigint, r_now_seconds bigint, r_deliveries integer)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET jit TO 'off'
    AS $$
DECLARE
    n integer := cardinality(p_partner);
    i integer;
    j integer;
    rec record;
    -- Arrays start NULL unless a count or step 4's walk needs every element: assigning an element creates or
    -- extends one, and a missing element reads NULL (each initializer is an expression compiled on every call).
    -- The stored answers found up front (step 1), per push.
    st_hash text[];
    st_resp text[];
    st_status integer[];
    -- The resolution and the would-be answer (step 2), per push.
    rs_users integer[] := array_fill(0, ARRAY[n]);
    rs_suppressed integer[] := array_fill(0, ARRAY[n]);
    rs_devices integer[] := array_fill(0, ARRAY[n]);
    rs_missing text[];
    rs_response text[];
    -- What the resolution found, one element per row: devices (push, rank among the push's devices, user,
    -- device, service, environment, and the row as a leased notification carries it), users (push, user) and
    -- identifiers (push, 'e' or 'w', identifier).
    d_push integer[];
    d_slot integer[];
    d_user text[];
    d_device text[];
    d_service text[];
    d_env text[];
    d_row text[];
    u_push integer[];
    u_user text[];
    f_push integer[];
    f_kind text[];
    f_ident text[];
    missing text;
    -- The pushes in the order step 3 takes them (a statement only for a batch of several).
    ord integer[];
    -- The outcome (step 3; 'render' already in step 2), per push.
    o_outcome text[];
    o_hash text[];
    o_resp text[];
    o_status integer[];
    o_mc integer[];
    o_mo bigint[];
    o_dc integer[];
    o_do bigint[];
    o_now bigint[];
    dup_of integer[] := array_fill(NULL::integer, ARRAY[n]);
    -- The current partner's windows, and what each partner locked counted.
    cur uuid;
    cur_at integer := 0;
    minute_count integer;
    minute_oldest bigint;
    day_count integer;
    day_oldest bigint;
    -- Whether the current partner's oldest buckets were read (only a refusal needs them).
    oldest_read boolean;
    now_s bigint;
    keys text[];
    key_items integer[];
    b_partner uuid[];
    b_now bigint[];
    b_counted integer[];
    b_minute integer[];
    b_day integer[];
    b_of integer[];
    acc integer[];
    lost integer[];
    -- The accepted deliveries due now, their ids and their rows (step 6), and whether step 5 writes them leased:
    -- the rows of the last notification, the notifications before it (rows that did not fit one, and 'leased:' the
    -- ids of a push whose rows alone do not fit), and one push's rows.
    due_count integer := 0;
    due_ids text;
    due_rows text;
    due_notes text[];
    push_ids text;
    push_rows text;
    note text;
    leasing boolean := false;
    -- Whether any push of the batch carries an Idempotency-Key (steps 1 and 4 are for those).
    keyed boolean := cardinality(array_remove(p_key, NULL)) > 0;
BEGIN
    -- 1. The stored answers of the batch's keys (within their 24 hours), in one probe each.
    IF keyed THEN
        FOR rec IN
            SELECT x.o, k.body_hash, k.response, k.status
              FROM unnest(p_partner, p_key, p_now) WITH ORDINALITY AS x (p, k, t, o)
              JOIN idempotency_keys k ON k.partner_id = x.p AND k.key = x.k AND k.created_at > x.t - interval '24 hours'
        LOOP
            st_hash[rec.o] := rec.body_hash;
            st_resp[rec.o] := rec.response;
            st_status[rec.o] := rec.status;
        END LOOP;
    END IF;

    -- 2. Every other push's recipients, in one statement for the whole batch (functions/resolve_lines.sql), and the
    --    answer it would get. The rows are sorted into arrays by this loop, not by aggregates: starting the
    --    aggregates' plan cost a one-push batch more than its few rows cost the loop. A push whose stored answer
    --    was found is resolved too, and its rows skipped. A push's devices take its slots in (user, device) order.
    FOR rec IN
        SELECT r.line AS i, r.kind, r.ident, r.user_id, r.service, r.environment, r.opted_out, r.token, r.bundle_id
          FROM herald_resolve_lines(p_tenant, p_mini_app, p_e_line, p_emails, p_w_line, p_wallets) AS r
         WHERE st_hash[r.line] IS NULL
         ORDER BY r.line, r.kind, r.user_id, r.ident
    LOOP
        -- A push's devices come first (kind 'd'): one more than its slots and it goes back as 'render', and the
        -- rest of its rows are not needed.
        IF o_outcome[rec.i] = 'render' THEN
            CONTINUE;
        END IF;
        CASE rec.kind
        WHEN 'd' THEN
            rs_devices[rec.i] := rs_devices[rec.i] + 1;
            IF rs_devices[rec.i] > p_s_end[rec.i] - coalesce(p_s_end[rec.i - 1], 0) THEN
                o_outcome[rec.i] := 'render';
                CONTINUE;
            END IF;
            d_push := d_push || rec.i;
            d_slot := d_slot || rs_devices[rec.i];
            d_user := d_user || rec.user_id;
            d_device := d_device || rec.ident;
            d_service := d_service || rec.service;
            d_env := d_env || rec.environment;
            -- The row whole, as the worker's read would return it once leased (DeliveryStore.leasedRows): fields split
            -- by U+001F, rows by U+001E, neither of which JSON text, a token, an id or a timestamp contains; times as
            -- the intake's session writes them (TimeZone UTC, Sources/Postgres/PostgresConnectionOptions.swift). Built
            -- here, in one expression, for step 6 to pick: each expression of a call is compiled once a transaction,
            -- at a cost that grows with its nodes.
            d_row := d_row || array_to_string(ARRAY[
                p_delivery[coalesce(p_s_end[rec.i - 1], 0) + rs_devices[rec.i]]::text, rec.service, rec.environment,
                p_expires[rec.i]::text, rec.token, rec.bundle_id, p_partner[rec.i]::text,
                coalesce(p_send_at[rec.i], p_created[rec.i])::text,
                CASE rec.service WHEN 'apns' THEN p_apns[coalesce(p_s_end[rec.i - 1], 0) + rs_devices[rec.i]]
                                 ELSE p_fcm[coalesce(p_s_end[rec.i - 1], 0) + rs_devices[rec.i]] END], chr(31), '');
        WHEN 'u' THEN
            rs_users[rec.i] := rs_users[rec.i] + 1;
            IF rec.opted_out THEN
                rs_suppressed[rec.i] := rs_suppressed[rec.i] + 1;
            END IF;
            u_push := u_push || rec.i;
            u_user := u_user || rec.user_id;
        ELSE
            f_push := f_push || rec.i;
            f_kind := f_kind || rec.kind;
            f_ident := f_ident || rec.ident;
        END CASE;
    END LOOP;
    -- The identifiers that matched nobody, in request order from their JSON forms (a statement only for
    -- a push that has some), and the answer; none for a push going back as 'render'.
    FOR i IN 1..n LOOP
        IF st_hash[i] IS NOT NULL OR o_outcome[i] = 'render' THEN
            CONTINUE;
        END IF;
        IF coalesce(cardinality(array_positions(f_push, i)), 0)
           = cardinality(array_positions(p_e_line, i)) + cardinality(array_positions(p_w_line, i)) THEN
            rs_missing[i] := '{"emails":[],"wallets":[]}';
        ELSE
            SELECT '{"emails":[' || coalesce(string_agg(x.j, ',' ORDER BY x.o) FILTER (WHERE x.k = 'e'), '')
                   || '],"wallets":[' || coalesce(string_agg(x.j, ',' ORDER BY x.o) FILTER (WHERE x.k = 'w'), '') || ']}'
              INTO missing
              FROM (SELECT 'e' AS k, e.v, e.j, e.o
                      FROM unnest(p_emails, p_e_json, p_e_line) WITH ORDINALITY AS e (v, j, l, o)
                     WHERE e.l = i
                    UNION ALL
                    SELECT 'w', w.v, w.j, w.o
                      FROM unnest(p_wallets, p_w_json, p_w_line) WITH ORDINALITY AS w (v, j, l, o)
                     WHERE w.l = i) AS x
             WHERE NOT EXISTS (SELECT 1 FROM unnest(f_push, f_kind, f_ident) AS f (p, k, v)
                                WHERE f.p = i AND f.k = x.k AND f.v = x.v);
            rs_missing[i] := missing;
        END IF;
        rs_response[i] := '{"requestId":"' || p_request[i]::text || '","status":"'
            || CASE WHEN rs_devices[i] = 0 THEN 'completed' WHEN p_send_at[i] IS NOT NULL THEN 'scheduled' ELSE 'queued' END
            || '","recipients":' || rs_users[i] || ',"deliveries":' || rs_devices[i]
            || ',"suppressed":' || rs_suppressed[i] || ',"sent":0,"failed":0,"missing":' || rs_missing[i] || '}';
    END LOOP;

    -- 3. In order, per partner (locked in uuid order, its windows read once): replay, render,
    --    refuse or count.
    IF n = 1 THEN
        ord := '{1}';
    ELSE
        ord := ARRAY(SELECT x.o FROM unnest(p_partner) WITH ORDINALITY AS x (p, o) ORDER BY x.p, x.o);
    END IF;
    FOREACH i IN ARRAY ord LOOP
        IF cur IS DISTINCT FROM p_partner[i] THEN
            cur := p_partner[i];
            -- Its own statement: the windows are read with a snapshot taken after the lock is held.
            PERFORM pg_advisory_xact_lock(hashtextextended(cur::text, 7301));
            now_s := floor(extract(epoch FROM clock_timestamp()));
            SELECT c.minute_count, c.day_count INTO minute_count, day_count FROM herald_rate_counts(cur, now_s) c;
            oldest_read := false;
            b_partner := b_partner || cur;
            b_now := b_now || now_s;
            b_counted := b_counted || 0;
            b_minute := b_minute || minute_count;
            b_day := b_day || day_count;
            cur_at := cur_at + 1;
            keys := '{}';
            key_items := '{}';
        END IF;
        IF st_hash[i] IS NOT NULL THEN
            o_outcome[i] := 'replay'; o_hash[i] := st_hash[i]; o_resp[i] := st_resp[i]; o_status[i] := st_status[i];
            CONTINUE;
        END IF;
        IF o_outcome[i] = 'render' THEN
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
            IF NOT oldest_read THEN
                SELECT o.minute_oldest, o.day_oldest INTO minute_oldest, day_oldest FROM herald_rate_oldest(cur, now_s) o;
                oldest_read := true;
            END IF;
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
    IF keyed THEN
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
    END IF;

    -- 5. The counts, once per partner, and the accepted pushes' rows, in one statement (each part writes
    --    nothing when nothing is accepted). Partner traffic is lane 0; a delivery is due at sendAt, or at once.
    --    The rows step 6 lists go out leased to the worker it notifies when the intake names its lease (p_lease):
    --    attempted once, as a claim would leave them, and the worker sends them from step 6's notification (or reads
    --    them, Sources/Store/DeliveryStore.swift, readLeasedSQL) instead of claiming them, or releases them. Unsent
    --    (the worker crashed), the rescuer returns them to pending when the lease ends.
    -- A loop, not a statement: a few expressions cost less than starting a plan.
    IF p_notify IS NOT NULL THEN
        FOREACH i IN ARRAY coalesce(acc, '{}') LOOP
            IF rs_devices[i] > 0 AND (p_send_at[i] IS NULL OR p_send_at[i] <= p_now[i]) THEN
                push_ids := array_to_string(
                    p_delivery[coalesce(p_s_end[i - 1], 0) + 1:coalesce(p_s_end[i - 1], 0) + rs_devices[i]], ',');
                due_ids := concat_ws(',', due_ids, push_ids);
                -- A push's devices are together in the resolution's rows. A notification's payload stays under
                -- Postgres' 8,000 bytes: a batch's rows go in as many as they need, a push's rows whole in one.
                push_rows := array_to_string(
                    d_row[array_position(d_push, i):array_position(d_push, i) + rs_devices[i] - 1], chr(30));
                IF octet_length(push_rows) > 7900 THEN
                    due_notes := due_notes || ('leased:' || push_ids);
                ELSIF coalesce(octet_length(due_rows), 0) + 1 + octet_length(push_rows) > 7900 THEN
                    due_notes := due_notes || ('rows:' || due_rows);
                    due_rows := push_rows;
                ELSE
                    due_rows := concat_ws(chr(30), due_rows, push_rows);
                END IF;
                due_count := due_count + rs_devices[i];
            END IF;
        END LOOP;
        -- Under the registration the intake read (a primary-key probe): a worker that is draining, or that lost that
        -- listener and registered another, withdrew it, and its rows are then written pending.
        leasing := p_lease IS NOT NULL AND p_lease_seconds > 0 AND due_count BETWEEN 1 AND 200
            AND EXISTS (SELECT 1 FROM worker_listeners l WHERE l.pid = p_lease_listener AND l.worker_id = p_lease);
    END IF;
    WITH counts AS (
        INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
        SELECT x.p, g.granularity, CASE g.granularity WHEN 's' THEN x.t ELSE x.t / 60 END, x.c
          FROM unnest(b_partner, b_now, b_counted) AS x (p, t, c), (VALUES ('s'::"char"), ('m'::"char")) AS g (granularity)
         WHERE x.c > 0
        ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + EXCLUDED.count
    ), windows AS (
        INSERT INTO rate_windows AS w (partner_id, minute_edge, minute_count, day_edge, day_count)
        SELECT x.p, x.t - 60, x.m + x.c, x.t / 60 - 1440, x.d + x.c
          FROM unnest(b_partner, b_now, b_counted, b_minute, b_day) AS x (p, t, c, m, d)
         WHERE x.c > 0
        ON CONFLICT (partner_id) DO UPDATE
           SET minute_edge = EXCLUDED.minute_edge, minute_count = EXCLUDED.minute_count,
               day_edge = EXCLUDED.day_edge, day_count = EXCLUDED.day_count
    ), requests AS (
        INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
            deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
        SELECT p_request[a], p_created[a], p_partner[a], p_mini_app[a], p_key[a], p_title[a], p_body[a],
               p_deep_link[a], p_data[a]::jsonb, p_send_at[a], p_ttl[a], p_expires[a], 0, rs_users[a],
               rs_devices[a], rs_suppressed[a], rs_missing[a]::jsonb
          FROM unnest(acc) AS a
    ), senders AS (
        INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
        SELECT u.user_id, p_mini_app[u.a], p_created[u.a] FROM unnest(u_push, u_user) AS u (a, user_id)
         WHERE u.a = ANY (acc)
        ON CONFLICT DO NOTHING
    )
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id,
        device_id, environment, payload, available_at, expires_at, state, leased_by, attempts, lease_expires_at)
    SELECT p_delivery[s.slot], p_request[d.a], p_created[d.a], p_partner[d.a], 0, d.service, d.user_id, d.device,
           d.env, CASE d.service WHEN 'apns' THEN p_apns[s.slot] ELSE p_fcm[s.slot] END,
           coalesce(p_send_at[d.a], p_created[d.a]), p_expires[d.a],
           CASE WHEN s.leased THEN 'leased' ELSE 'pending' END, CASE WHEN s.leased THEN p_lease END,
           CASE WHEN s.leased THEN 1 ELSE 0 END,
           CASE WHEN s.leased THEN now() + make_interval(secs => p_lease_seconds) END
      FROM unnest(d_push, d_slot, d_user, d_device, d_service, d_env) AS d (a, k, user_id, device, service, env)
     CROSS JOIN LATERAL (SELECT coalesce(p_s_end[d.a - 1], 0) + d.k AS slot,
                                leasing AND (p_send_at[d.a] IS NULL OR p_send_at[d.a] <= p_now[d.a]) AS leased) AS s
     WHERE d.a = ANY (acc);

    -- 6. The worker whose turn it is (p_notify, a channel; NULL: none), told when an accepted push has deliveries due
    --    now, and which: the payload lists them (ids, comma-separated), so the worker leases them by primary key
    --    instead of walking the due index (Sources/Store/DeliveryStore.swift, claimListedSQL). When step 5 leased
    --    them to it, the payloads carry them whole ('rows:' and the rows, DeliveryStore.leasedRows; a batch's rows in
    --    as many notifications as they need), so the worker sends without a statement; a push whose rows alone do
    --    not fit one goes by id ('leased:' and the ids, DeliveryStore.leasedIDs), and the worker reads them. More
    --    than 200 (an id list must stay under 8,000 bytes) go unlisted and pending: an empty payload, and the
    --    worker's claim walks the index.
    --    Sent at this commit, so the worker hears of the rows as they become visible, without the intake's notifier
    --    thread and its own transaction. The notification queue's lock is held from here to the end of the commit:
    --    an intake writes one batch at a time, so it serialises only the batches of other intakes.
    IF due_count > 0 THEN
        IF leasing AND due_notes IS NULL THEN
            -- Nearly every batch: its rows fit one notification, sent without a loop.
            PERFORM pg_notify(p_notify, 'rows:' || due_rows);
        ELSIF leasing THEN
            IF due_rows IS NOT NULL THEN
                due_notes := due_notes || ('rows:' || due_rows);
            END IF;
            FOREACH note IN ARRAY due_notes LOOP
                PERFORM pg_notify(p_notify, note);
            END LOOP;
        ELSE
            PERFORM pg_notify(p_notify, CASE WHEN due_count <= 200 THEN due_ids ELSE '' END);
        END IF;
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
-- Name: herald_partners_audit(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_partners_audit() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_changes jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM herald_admin_audit('partner.created', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'displayName', NEW.display_name, 'tenantId', NEW.tenant_id,
            'rateLimitPerMinute', NEW.rate_limit_per_minute, 'rateLimitPerDay', NEW.rate_limit_per_day,
            'iconUrl', NEW.icon_url, 'icon', NEW.icon_updated_at IS NOT NULL, 'webhookUrl', NEW.webhook_url,
            'sound', NEW.sound, 'allowTimeSensitive', NEW.allow_time_sensitive));
        RETURN NULL;
    END IF;
    IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
        PERFORM herald_admin_audit('partner.revoked', NEW.id, NEW.mini_app_id, '{}');
    END IF;
    IF NEW.key_hash IS DISTINCT FROM OLD.key_hash THEN
        PERFORM herald_admin_audit('partner.key_rotated', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'previousKeyValidUntil', herald_iso8601(NEW.previous_key_expires_at)));
    ELSIF OLD.previous_key_hash IS NOT NULL AND NEW.previous_key_hash IS NULL THEN
        PERFORM herald_admin_audit('partner.previous_key_ended', NEW.id, NEW.mini_app_id,
                                   jsonb_build_object('wasValidUntil', herald_iso8601(OLD.previous_key_expires_at)));
    END IF;
    IF NEW.webhook_secret IS DISTINCT FROM OLD.webhook_secret AND NEW.webhook_secret IS NOT NULL
       AND NEW.webhook_url IS NOT DISTINCT FROM OLD.webhook_url THEN
        PERFORM herald_admin_audit('partner.webhook_secret_rotated', NEW.id, NEW.mini_app_id, '{}');
    END IF;
    -- Each changed field, from and to (the icon's images by when they were set).
    SELECT coalesce(jsonb_object_agg(f.name, jsonb_build_object('from', o.fields -> f.col, 'to', n.fields -> f.col)),
                    '{}')
      INTO v_changes
      FROM (VALUES ('display_name', 'displayName'), ('rate_limit_per_minute', 'rateLimitPerMinute'),
                   ('rate_limit_per_day', 'rateLimitPerDay'), ('icon_url', 'iconUrl'), ('webhook_url', 'webhookUrl'),
                   ('sound', 'sound'), ('allow_time_sensitive', 'allowTimeSensitive')) AS f (col, name),
           (SELECT to_jsonb(OLD) AS fields) o, (SELECT to_jsonb(NEW) AS fields) n
     WHERE o.fields -> f.col IS DISTINCT FROM n.fields -> f.col;
    IF NEW.icon_updated_at IS DISTINCT FROM OLD.icon_updated_at THEN
        v_changes := v_changes || jsonb_build_object('iconUpdatedAt', jsonb_build_object(
            'from', herald_iso8601(OLD.icon_updated_at), 'to', herald_iso8601(NEW.icon_updated_at)));
    END IF;
    IF v_changes <> '{}' THEN
        PERFORM herald_admin_audit('partner.updated', NEW.id, NEW.mini_app_id, v_changes);
    END IF;
    RETURN NULL;
END
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
-- Name: herald_put_device(text, text, text, text, text, text, text, text, jsonb); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_put_device(p_user text, p_device text, p_platform text, p_environment text, p_bundle text, p_apns text, p_push_to_start text, p_fcm text, p_template_tokens jsonb) RETURNS TABLE(created boolean, taken integer)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_token     text;
    v_created   boolean;
    v_taken     integer := 0;
    v_rows      integer;
    v_templates text[] := ARRAY(SELECT jsonb_object_keys(coalesce(p_template_tokens, '{}')));
    v_starts    text[] := ARRAY(SELECT value FROM jsonb_each_text(coalesce(p_template_tokens, '{}')));
BEGIN
    FOR v_token IN SELECT DISTINCT t FROM unnest(ARRAY[p_apns, p_push_to_start, p_fcm] || v_starts) AS t
                    WHERE t IS NOT NULL ORDER BY t LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_token, 7307));
    END LOOP;

    IF p_apns IS NOT NULL THEN
        UPDATE devices SET apns_token = NULL, apns_token_invalidated_at = NULL, apns_token_invalid_reason = NULL,
                           updated_at = now()
         WHERE apns_token = p_apns AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    -- A push-to-start token, whether registered for every template or for one, belongs to one device.
    IF p_push_to_start IS NOT NULL OR cardinality(v_starts) > 0 THEN
        UPDATE devices SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL,
                           apns_push_to_start_invalid_reason = NULL, updated_at = now()
         WHERE apns_push_to_start_token = ANY (array_append(v_starts, p_push_to_start))
           AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
        DELETE FROM device_push_to_start_tokens
         WHERE token = ANY (array_append(v_starts, p_push_to_start)) AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_fcm IS NOT NULL THEN
        UPDATE devices SET fcm_token = NULL, fcm_token_invalidated_at = NULL, fcm_token_invalid_reason = NULL,
                           updated_at = now()
         WHERE fcm_token = p_fcm AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;

    INSERT INTO devices AS d (user_id, device_id, platform, environment, bundle_id, apns_token,
                              apns_push_to_start_token, fcm_token, registered_at)
    VALUES (p_user, p_device, p_platform, p_environment, p_bundle, p_apns, p_push_to_start, p_fcm, now())
    ON CONFLICT (user_id, device_id) DO UPDATE SET
        platform = EXCLUDED.platform,
        environment = EXCLUDED.environment,
        bundle_id = EXCLUDED.bundle_id,
        apns_token = EXCLUDED.apns_token,
        apns_token_invalidated_at = NULL,
        apns_token_invalid_reason = NULL,
        apns_push_to_start_token = EXCLUDED.apns_push_to_start_token,
        apns_push_to_start_invalidated_at = NULL,
        apns_push_to_start_invalid_reason = NULL,
        fcm_token = EXCLUDED.fcm_token,
        fcm_token_invalidated_at = NULL,
        fcm_token_invalid_reason = NULL,
        registered_at = now(),
        updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    DELETE FROM device_push_to_start_tokens
     WHERE user_id = p_user AND device_id = p_device AND template <> ALL (v_templates);
    INSERT INTO device_push_to_start_tokens (user_id, device_id, template, token)
    SELECT p_user, p_device, t.key, t.value FROM jsonb_each_text(coalesce(p_template_tokens, '{}')) AS t
    ON CONFLICT (user_id, device_id, template) DO UPDATE SET
        token = EXCLUDED.token, invalidated_at = NULL, invalid_reason = NULL;

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
    LANGUAGE plpgsql STABLE
    SET jit TO 'off'
    AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
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
      FROM heads h;
END
$$;


--
-- Name: herald_rate_counts(uuid, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_rate_counts(p_partner uuid, p_now bigint, OUT minute_count integer, OUT day_count integer) RETURNS record
    LANGUAGE plpgsql STABLE
    AS $$
DECLARE
    w record;
BEGIN
    SELECT r.minute_edge, r.minute_count, r.day_edge, r.day_count INTO w
      FROM rate_windows r WHERE r.partner_id = p_partner;
    IF w.minute_edge IS NULL OR w.minute_edge > p_now - 60 OR w.minute_edge < p_now - 90 THEN
        SELECT coalesce(sum(b.count), 0) INTO minute_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > p_now - 60;
    ELSIF w.minute_edge < p_now - 60 THEN
        SELECT w.minute_count - coalesce(sum(b.count), 0) INTO minute_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > w.minute_edge AND b.bucket <= p_now - 60;
    ELSE
        minute_count := w.minute_count;
    END IF;
    IF w.day_edge IS NULL OR w.day_edge > p_now / 60 - 1440 OR w.day_edge < p_now / 60 - 1470 THEN
        SELECT coalesce(sum(b.count), 0) INTO day_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > p_now / 60 - 1440;
    ELSIF w.day_edge < p_now / 60 - 1440 THEN
        SELECT w.day_count - coalesce(sum(b.count), 0) INTO day_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > w.day_edge
           AND b.bucket <= p_now / 60 - 1440;
    ELSE
        day_count := w.day_count;
    END IF;
END
$$;


--
-- Name: herald_rate_oldest(uuid, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_rate_oldest(p_partner uuid, p_now bigint) RETURNS TABLE(minute_oldest bigint, day_oldest bigint)
    LANGUAGE sql STABLE
    AS $$
    SELECT (SELECT min(b.bucket) FROM rate_buckets b
             WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > p_now - 60),
           (SELECT min(b.bucket) FROM rate_buckets b
             WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > p_now / 60 - 1440)
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
    WITH given_back AS (
        UPDATE rate_buckets SET count = count - 1
         WHERE partner_id = p_partner AND count > 0
           AND ((granularity = 's' AND bucket = p_seconds) OR (granularity = 'm' AND bucket = p_seconds / 60))
        RETURNING granularity, bucket
    )
    UPDATE rate_windows w
       SET minute_count = w.minute_count - (SELECT count(*) FROM given_back g
                                             WHERE g.granularity = 's' AND g.bucket > w.minute_edge),
           day_count = w.day_count - (SELECT count(*) FROM given_back g
                                       WHERE g.granularity = 'm' AND g.bucket > w.day_edge)
     WHERE w.partner_id = p_partner AND EXISTS (SELECT 1 FROM given_back);
END
$$;


--
-- Name: herald_rate_reserve(uuid, integer, integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_rate_reserve(p_partner uuid, p_per_minute integer, p_per_day integer, OUT admitted boolean, OUT minute_count integer, OUT minute_oldest bigint, OUT day_count integer, OUT day_oldest bigint, OUT now_seconds bigint) RETURNS record
    LANGUAGE plpgsql
    AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    now_seconds := floor(extract(epoch FROM clock_timestamp()));
    SELECT c.minute_count, c.day_count INTO minute_count, day_count FROM herald_rate_counts(p_partner, now_seconds) c;
    admitted := minute_count < p_per_minute AND day_count < p_per_day;
    IF admitted THEN
        WITH counted AS (
            INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
            VALUES (p_partner, 's', now_seconds, 1), (p_partner, 'm', now_seconds / 60, 1)
            ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + 1
        )
        INSERT INTO rate_windows AS w (partner_id, minute_edge, minute_count, day_edge, day_count)
        VALUES (p_partner, now_seconds - 60, minute_count + 1, now_seconds / 60 - 1440, day_count + 1)
        ON CONFLICT (partner_id) DO UPDATE
           SET minute_edge = EXCLUDED.minute_edge, minute_count = EXCLUDED.minute_count,
               day_edge = EXCLUDED.day_edge, day_count = EXCLUDED.day_count;
    ELSE
        SELECT o.minute_oldest, o.day_oldest INTO minute_oldest, day_oldest FROM herald_rate_oldest(p_partner, now_seconds) o;
    END IF;
END
$$;


--
-- Name: herald_reminder_pending(uuid[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_reminder_pending(p_deliveries uuid[]) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT count(*) = cardinality(p_deliveries)
      FROM deliveries d
     WHERE d.id = ANY (p_deliveries) AND d.state = 'pending' AND d.attempts = 0;
$$;


--
-- Name: herald_resolve_lines(text[], text[], integer[], text[], integer[], text[]); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_resolve_lines(p_tenants text[], p_mini_apps text[], p_e_line integer[], p_emails text[], p_w_line integer[], p_wallets text[]) RETURNS TABLE(line integer, kind text, ident text, user_id text, service text, environment text, opted_out boolean, token text, bundle_id text)
    LANGUAGE sql STABLE
    AS $$
    WITH ids AS (
        -- Emails are looked up in NFC: the intake sends them so, and a writer that did not is normalised here.
        SELECT r.line, 'e'::text AS kind, e.email AS ident, e.user_id
          FROM unnest(p_e_line, p_emails) AS r (line, ident)
          JOIN user_emails e
            ON e.tenant_id = p_tenants[r.line]
           AND e.email = CASE WHEN r.ident IS NFC NORMALIZED THEN r.ident ELSE normalize(r.ident, NFC) END
        UNION ALL
        SELECT r.line, 'w', w.wallet, w.user_id
          FROM unnest(p_w_line, p_wallets) AS r (line, ident)
          JOIN user_wallets w ON w.tenant_id = p_tenants[r.line] AND w.wallet = r.ident
    ), targets AS (
        SELECT u.line, u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_apps[u.line])
                   AS opted_out
          FROM (SELECT DISTINCT ids.line, ids.user_id FROM ids) AS u
    )
    SELECT ids.line, ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean, NULL::text, NULL::text
      FROM ids
    UNION ALL
    SELECT t.line, 'u', NULL, t.user_id, NULL, NULL, t.opted_out, NULL, NULL FROM targets t
    UNION ALL
    SELECT t.line, 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment,
           NULL, CASE d.platform WHEN 'ios' THEN d.apns_token ELSE d.fcm_token END, d.bundle_id
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
$$;


--
-- Name: herald_schedule_reminder(uuid, text, text, uuid, text, integer, uuid, timestamp with time zone, text, text, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone, integer, timestamp with time zone, uuid[], text[], text[], text[], text[], text, text); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_schedule_reminder(p_reminder uuid, p_user text, p_tenant text, p_partner uuid, p_mini_app text, p_max_pending integer, p_request uuid, p_created timestamp with time zone, p_title text, p_shown_title text, p_body text, p_deep_link text, p_at timestamp with time zone, p_due timestamp with time zone, p_send_at timestamp with time zone, p_ttl integer, p_expires timestamp with time zone, p_delivery uuid[], p_service text[], p_device text[], p_environment text[], p_payload text[], p_key text, p_body_hash text) RETURNS TABLE(outcome text, pending integer, reminder uuid)
    LANGUAGE plpgsql
    AS $$
DECLARE
    v_tenant  text;
    v_pending integer;
    v_keyed   record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_user || '/' || p_mini_app, 7313));
    IF p_key IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_user || '/' || p_key, 7314));
        SELECT r.id, r.body_hash, r.created_at INTO v_keyed
          FROM reminders r WHERE r.user_id = p_user AND r.idempotency_key = p_key;
        IF FOUND AND v_keyed.created_at > now() - interval '24 hours' THEN
            RETURN QUERY SELECT CASE WHEN v_keyed.body_hash = p_body_hash THEN 'replay' ELSE 'key_reused' END, 0, v_keyed.id;
            RETURN;
        ELSIF FOUND THEN
            UPDATE reminders SET idempotency_key = NULL, body_hash = NULL WHERE id = v_keyed.id;
        END IF;
    END IF;
    SELECT u.tenant_id INTO v_tenant FROM users u WHERE u.id = p_user;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'user_not_found'::text, 0, NULL::uuid;
        RETURN;
    END IF;
    IF v_tenant <> p_tenant THEN
        RETURN QUERY SELECT 'tenant_mismatch'::text, 0, NULL::uuid;
        RETURN;
    END IF;

    UPDATE reminders r SET status = 'sent', finished_at = now()
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled'
       AND NOT herald_reminder_pending(r.deliveries);
    SELECT count(*) INTO v_pending FROM reminders r
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled';
    IF v_pending >= p_max_pending THEN
        RETURN QUERY SELECT 'limited'::text, v_pending, NULL::uuid;
        RETURN;
    END IF;

    -- The audit row of a one-recipient push without partner data: the partner's GET of it, its counts,
    -- the push.completed webhook and heraldctl's stats and replay treat it as they treat a push.
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body, deep_link,
        data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    VALUES (p_request, p_created, p_partner, p_mini_app, NULL, p_shown_title, p_body, p_deep_link, '{}', p_send_at,
            p_ttl, p_expires, 0, 1, cardinality(p_delivery), 0, '{"emails":[],"wallets":[]}');
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    VALUES (p_user, p_mini_app, p_created)
    ON CONFLICT DO NOTHING;
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
        environment, payload, available_at, expires_at)
    SELECT x.id, p_request, p_created, p_partner, 0, x.service, p_user, x.device, x.environment, x.payload, p_due,
           p_expires
      FROM unnest(p_delivery, p_service, p_device, p_environment, p_payload) AS x (id, service, device, environment,
                                                                                  payload);
    INSERT INTO reminders (id, user_id, mini_app_id, partner_id, request_id, request_created_at, title, body,
        deep_link, at, deliveries, created_at, idempotency_key, body_hash)
    VALUES (p_reminder, p_user, p_mini_app, p_partner, p_request, p_created, p_title, p_body, p_deep_link, p_at,
            p_delivery, p_created, p_key, p_body_hash);
    RETURN QUERY SELECT 'scheduled'::text, v_pending + 1, p_reminder;
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
-- Name: herald_uuid_v7_time(uuid); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_uuid_v7_time(p_id uuid) RETURNS timestamp with time zone
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
    SELECT timestamptz 'epoch'
           + ('x' || substr(replace(p_id::text, '-', ''), 1, 12))::bit(48)::bigint * interval '1 millisecond'
$$;


--
-- Name: herald_webhook_claim(text, integer, integer, uuid[], integer[], integer, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.herald_webhook_claim(p_worker text, p_limit integer, p_per_partner integer, p_room_partners uuid[], p_rooms integer[], p_lease_seconds integer, p_now timestamp with time zone) RETURNS TABLE(id uuid, partner_id uuid, body text, attempts integer, window_start timestamp with time zone, url text, secret text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.state = 'pending' AND e.available_at <= p_now)
       AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.state = 'sending' AND e.lease_expires_at <= p_now) THEN
        RETURN;
    END IF;
    RETURN QUERY
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
    RETURNING e.id, e.partner_id, e.body, e.attempts, e.window_start, p.webhook_url, p.webhook_secret;
END
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
-- Name: admin_audit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.admin_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    actor text NOT NULL,
    actor_detail text,
    client text,
    action text NOT NULL,
    partner_id uuid,
    mini_app_id text,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL
);


--
-- Name: admin_audit_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.admin_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.admin_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


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
-- Name: console_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.console_sessions (
    token_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    client text
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
    state public.delivery_state DEFAULT 'pending'::text NOT NULL,
    service public.delivery_service NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    environment public.delivery_environment NOT NULL,
    payload text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    available_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    lease_expires_at timestamp with time zone,
    leased_by text,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    activity_id uuid,
    activity_event public.delivery_activity_event,
    priority smallint,
    member_count integer DEFAULT 1 NOT NULL,
    members uuid[],
    member_users text[],
    member_devices text[],
    member_payloads text[],
    members_done integer[],
    activity_event_id uuid,
    CONSTRAINT deliveries_members_shape CHECK ((((members IS NULL) = (member_count = 1)) AND ((members IS NULL) OR (activity_id IS NULL))))
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
-- Name: device_push_to_start_tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.device_push_to_start_tokens (
    user_id text NOT NULL,
    device_id text NOT NULL,
    template text NOT NULL,
    token text NOT NULL,
    invalidated_at timestamp with time zone,
    invalid_reason text
);


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
    apns_token_invalid_reason text,
    apns_push_to_start_invalid_reason text,
    fcm_token_invalid_reason text,
    registered_at timestamp with time zone,
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
    relevance_score smallint DEFAULT 50 NOT NULL,
    alerted_at timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[] NOT NULL,
    apns_end_priority smallint DEFAULT 5 NOT NULL,
    channel_id uuid,
    CONSTRAINT live_activities_relevance_score_check CHECK (((relevance_score >= 0) AND (relevance_score <= 100))),
    CONSTRAINT live_activities_status_check CHECK ((status = ANY (ARRAY['active'::text, 'ended'::text, 'replaced'::text, 'expired'::text, 'dismissed'::text]))),
    CONSTRAINT live_activities_template_check CHECK ((template = ANY (ARRAY['progress'::text, 'status'::text, 'countdown'::text])))
)
WITH (autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_scale_factor='0.05');


--
-- Name: live_activity_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
)
PARTITION BY RANGE (created_at);


--
-- Name: live_activity_events_2026_11; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events_2026_11 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
);


--
-- Name: live_activity_events_2026_12; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events_2026_12 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
);


--
-- Name: live_activity_events_2027_01; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events_2027_01 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
);


--
-- Name: live_activity_events_2027_02; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events_2027_02 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
);


--
-- Name: live_activity_events_2027_03; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_activity_events_2027_03 (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text, 'expire'::text, 'replace-end'::text])))
);


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
    device_state text,
    device_state_at timestamp with time zone,
    start_sent_at timestamp with time zone,
    held_event_id uuid,
    CONSTRAINT live_activity_targets_device_state_check CHECK ((device_state = ANY (ARRAY['active'::text, 'dismissed'::text, 'ended'::text, 'stale'::text, 'unconfirmed'::text]))),
    CONSTRAINT live_activity_targets_held_event_check CHECK ((held_event = ANY (ARRAY['update'::text, 'end'::text]))),
    CONSTRAINT live_activity_targets_service_check CHECK ((service = ANY (ARRAY['apns'::text, 'fcm'::text])))
);


--
-- Name: live_channel_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_channel_events (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    channel_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    version integer NOT NULL,
    outcome text DEFAULT 'pending'::text NOT NULL,
    reason text,
    finished_at timestamp with time zone,
    CONSTRAINT live_channel_events_kind_check CHECK ((kind = ANY (ARRAY['open'::text, 'update'::text, 'end'::text, 'expire'::text]))),
    CONSTRAINT live_channel_events_outcome_check CHECK ((outcome = ANY (ARRAY['pending'::text, 'sent'::text, 'superseded'::text, 'failed'::text, 'not_sent'::text])))
);


--
-- Name: live_channels; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.live_channels (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    template text NOT NULL,
    attributes jsonb NOT NULL,
    state jsonb NOT NULL,
    status text DEFAULT 'opening'::text NOT NULL,
    apns_channel_id text,
    environment text,
    version integer DEFAULT 1 NOT NULL,
    sent_version integer DEFAULT 1 NOT NULL,
    last_timestamp bigint NOT NULL,
    relevance_score smallint NOT NULL,
    apns_payload text,
    apns_priority smallint,
    apns_end_payload text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    delete_at timestamp with time zone,
    next_at timestamp with time zone NOT NULL,
    leased_until timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    failure text,
    broadcasts integer DEFAULT 0 NOT NULL,
    alerted_at timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[] NOT NULL,
    CONSTRAINT live_channels_environment_check CHECK ((environment = ANY (ARRAY['production'::text, 'sandbox'::text]))),
    CONSTRAINT live_channels_status_check CHECK ((status = ANY (ARRAY['opening'::text, 'open'::text, 'ending'::text, 'ended'::text, 'failed'::text]))),
    CONSTRAINT live_channels_template_check CHECK ((template = ANY (ARRAY['progress'::text, 'status'::text, 'countdown'::text])))
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
    sound text DEFAULT 'default'::text,
    allow_time_sensitive boolean DEFAULT false NOT NULL,
    previous_key_hash text,
    previous_key_expires_at timestamp with time zone,
    CONSTRAINT partners_previous_key_whole CHECK (((previous_key_hash IS NULL) = (previous_key_expires_at IS NULL))),
    CONSTRAINT partners_rate_limit_per_day_check CHECK ((rate_limit_per_day > 0)),
    CONSTRAINT partners_rate_limit_per_minute_check CHECK ((rate_limit_per_minute > 0)),
    CONSTRAINT partners_sound_name CHECK ((((char_length(sound) >= 1) AND (char_length(sound) <= 64)) AND (strpos(sound, '/'::text) = 0) AND (strpos(sound, '\'::text) = 0))),
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
-- Name: rate_windows; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.rate_windows (
    partner_id uuid NOT NULL,
    minute_edge bigint NOT NULL,
    minute_count integer NOT NULL,
    day_edge bigint NOT NULL,
    day_count integer NOT NULL
);


--
-- Name: reminders; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reminders (
    id uuid NOT NULL,
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    partner_id uuid NOT NULL,
    request_id uuid NOT NULL,
    request_created_at timestamp with time zone NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    at timestamp with time zone NOT NULL,
    deliveries uuid[] NOT NULL,
    status text DEFAULT 'scheduled'::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    idempotency_key text,
    body_hash text,
    CONSTRAINT reminders_deliveries_check CHECK ((cardinality(deliveries) > 0)),
    CONSTRAINT reminders_status_check CHECK ((status = ANY (ARRAY['scheduled'::text, 'sent'::text, 'cancelled'::text])))
);


--
-- Name: schema_functions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_functions (
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
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
    CONSTRAINT webhook_events_type_check CHECK ((type = ANY (ARRAY['push.completed'::text, 'activity.ended'::text, 'activity.expired'::text, 'activity.dismissed'::text])))
);


--
-- Name: worker_heartbeats; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_heartbeats (
    worker_id text NOT NULL,
    host text NOT NULL,
    version text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    in_flight integer NOT NULL,
    paused_upstreams text[] DEFAULT '{}'::text[] NOT NULL,
    claims_per_second double precision NOT NULL,
    interval_seconds double precision NOT NULL,
    CONSTRAINT worker_heartbeats_claims_per_second_check CHECK ((claims_per_second >= (0)::double precision)),
    CONSTRAINT worker_heartbeats_in_flight_check CHECK ((in_flight >= 0)),
    CONSTRAINT worker_heartbeats_interval_seconds_check CHECK ((interval_seconds > (0)::double precision))
);


--
-- Name: worker_listeners; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.worker_listeners (
    pid integer NOT NULL,
    worker_id text NOT NULL,
    lease_seconds integer NOT NULL,
    registered_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT worker_listeners_lease_seconds_check CHECK ((lease_seconds > 0))
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
-- Name: live_activity_events_2026_11; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events ATTACH PARTITION public.live_activity_events_2026_11 FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00');


--
-- Name: live_activity_events_2026_12; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events ATTACH PARTITION public.live_activity_events_2026_12 FOR VALUES FROM ('2026-12-01 00:00:00+00') TO ('2027-01-01 00:00:00+00');


--
-- Name: live_activity_events_2027_01; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events ATTACH PARTITION public.live_activity_events_2027_01 FOR VALUES FROM ('2027-01-01 00:00:00+00') TO ('2027-02-01 00:00:00+00');


--
-- Name: live_activity_events_2027_02; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events ATTACH PARTITION public.live_activity_events_2027_02 FOR VALUES FROM ('2027-02-01 00:00:00+00') TO ('2027-03-01 00:00:00+00');


--
-- Name: live_activity_events_2027_03; Type: TABLE ATTACH; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events ATTACH PARTITION public.live_activity_events_2027_03 FOR VALUES FROM ('2027-03-01 00:00:00+00') TO ('2027-04-01 00:00:00+00');


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
-- Data for Name: admin_audit; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: backfill_keys; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: console_sessions; Type: TABLE DATA; Schema: public; Owner: -
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
-- Data for Name: device_push_to_start_tokens; Type: TABLE DATA; Schema: public; Owner: -
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
-- Data for Name: live_activity_events_2026_11; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_events_2026_12; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_events_2027_01; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_events_2027_02; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_events_2027_03; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_activity_targets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_channel_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: live_channels; Type: TABLE DATA; Schema: public; Owner: -
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
-- Data for Name: rate_windows; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: reminders; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: schema_functions; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_functions VALUES ('rate_counts.sql', '5945dfaf4b8f7eae', '2026-12-07 11:19:53.137613+00');
INSERT INTO public.schema_functions VALUES ('rate_oldest.sql', '402140a44502f730', '2026-12-07 11:19:53.545457+00');
INSERT INTO public.schema_functions VALUES ('rate_reserve.sql', '42e568a18cf119f', '2026-12-07 11:19:54.013442+00');
INSERT INTO public.schema_functions VALUES ('rate_refund.sql', '2f1d67bc46747b54', '2026-12-07 11:19:54.40147+00');
INSERT INTO public.schema_functions VALUES ('expired_monthly_partitions.sql', 'b5d28b1af70a3f7a', '2026-12-07 11:19:54.82946+00');
INSERT INTO public.schema_functions VALUES ('queue_heads.sql', 'f7407bf55b508438', '2026-12-07 11:19:55.149448+00');
INSERT INTO public.schema_functions VALUES ('email_nfc.sql', '3233628ace75c12b', '2026-12-07 11:19:55.27523+00');
INSERT INTO public.schema_functions VALUES ('resolve_lines.sql', '56054cbd0d160b72', '2026-12-07 11:19:55.42562+00');
INSERT INTO public.schema_functions VALUES ('activity_audience.sql', '8d39633a8eca305e', '2026-12-07 11:19:55.649443+00');
INSERT INTO public.schema_functions VALUES ('activity_claim_key.sql', '17c61402b021b6fd', '2026-12-07 11:19:56.16149+00');
INSERT INTO public.schema_functions VALUES ('activity_alert_spend.sql', '41cd8cd697f8a67d', '2026-12-07 11:19:56.519187+00');
INSERT INTO public.schema_functions VALUES ('activity_begin_change.sql', '29a795f3adac60ca', '2026-12-07 11:19:56.821457+00');
INSERT INTO public.schema_functions VALUES ('activity_update.sql', 'b60f1002c23ce48', '2026-12-07 11:19:57.081478+00');
INSERT INTO public.schema_functions VALUES ('activity_end.sql', '7081f898e7ba2466', '2026-12-07 11:19:57.453458+00');
INSERT INTO public.schema_functions VALUES ('activity_token.sql', 'b7fd71ae1538de1', '2026-12-07 11:19:57.713594+00');
INSERT INTO public.schema_functions VALUES ('expire_activities.sql', 'b00d793bab7eb56a', '2026-12-07 11:19:57.965467+00');
INSERT INTO public.schema_functions VALUES ('backfill_stage.sql', '83f9730dcb8ba734', '2026-12-07 11:19:58.229453+00');
INSERT INTO public.schema_functions VALUES ('backfill_apply.sql', '14367b26b249828f', '2026-12-07 11:19:58.709431+00');
INSERT INTO public.schema_functions VALUES ('put_user.sql', 'd3625e632d294f48', '2026-12-07 11:19:59.173427+00');
INSERT INTO public.schema_functions VALUES ('backfill_users.sql', '60f21f2ba968a0e0', '2026-12-07 11:19:59.645462+00');
INSERT INTO public.schema_functions VALUES ('uuid_v7.sql', 'd0e8f334b1c8383f', '2026-12-07 11:20:00.079733+00');
INSERT INTO public.schema_functions VALUES ('uuid_v7_time.sql', '5307079b5c6007d0', '2026-12-07 11:20:00.463347+00');
INSERT INTO public.schema_functions VALUES ('activity_event_counts.sql', 'b4218027c66ce53f', '2026-12-07 11:20:01.057667+00');
INSERT INTO public.schema_functions VALUES ('activity_dispatch.sql', 'ea17278b8ac9d380', '2026-12-07 11:20:01.505713+00');
INSERT INTO public.schema_functions VALUES ('activity_settle.sql', 'c776f7b49b701e75', '2026-12-07 11:20:01.885461+00');
INSERT INTO public.schema_functions VALUES ('activity_device_state.sql', 'a5a3bcdffa959ea2', '2026-12-07 11:20:02.393462+00');
INSERT INTO public.schema_functions VALUES ('activity_unconfirmed.sql', '4f69e1a8156062ef', '2026-12-07 11:20:02.829451+00');
INSERT INTO public.schema_functions VALUES ('activity_start.sql', '51d50bf37a303055', '2026-12-07 11:20:03.233499+00');
INSERT INTO public.schema_functions VALUES ('delivery_weight.sql', 'a8d4889b40dc80d1', '2026-12-07 11:20:03.541463+00');
INSERT INTO public.schema_functions VALUES ('iso8601.sql', 'b771f0a4e779ddda', '2026-12-07 11:20:03.805024+00');
INSERT INTO public.schema_functions VALUES ('webhook_event.sql', 'db777d2981a6c17', '2026-12-07 11:20:04.033453+00');
INSERT INTO public.schema_functions VALUES ('webhook_claim.sql', '2223085335d2417f', '2026-12-07 11:20:04.34947+00');
INSERT INTO public.schema_functions VALUES ('webhook_record.sql', '7437a98b03712690', '2026-12-07 11:20:04.617465+00');
INSERT INTO public.schema_functions VALUES ('intake_push.sql', '1333b78314c6df9f', '2026-12-07 11:20:04.893453+00');
INSERT INTO public.schema_functions VALUES ('claim_deliveries.sql', 'a1219aa7dca96b6', '2026-12-07 11:20:05.141567+00');
INSERT INTO public.schema_functions VALUES ('ensure_monthly_partitions.sql', 'f4853c5a79b74c61', '2026-12-07 11:20:05.509456+00');
INSERT INTO public.schema_functions VALUES ('push_completed_event.sql', 'f56f8482a316a8e2', '2026-12-07 11:20:05.751487+00');
INSERT INTO public.schema_functions VALUES ('activity_finished_event.sql', '2d03f7827988c51a', '2026-12-07 11:20:06.021458+00');
INSERT INTO public.schema_functions VALUES ('put_device.sql', 'c56259a847e79b78', '2026-12-07 11:20:06.173714+00');
INSERT INTO public.schema_functions VALUES ('complete_deliveries.sql', '10154a10cae7d275', '2026-12-07 11:20:06.436061+00');
INSERT INTO public.schema_functions VALUES ('reminder_pending.sql', '97eff773db63cbd8', '2026-12-07 11:20:06.661469+00');
INSERT INTO public.schema_functions VALUES ('schedule_reminder.sql', 'c9ac9015e86bd2d7', '2026-12-07 11:20:07.189448+00');
INSERT INTO public.schema_functions VALUES ('cancel_reminder.sql', '8d8dce185b690a6', '2026-12-07 11:20:07.733471+00');
INSERT INTO public.schema_functions VALUES ('delivery_history_deliveries.sql', 'a8602c4f7bec0771', '2026-12-07 11:20:08.099299+00');
INSERT INTO public.schema_functions VALUES ('user_emails_nfc.sql', 'c6e3f97b084cc2d4', '2026-12-07 11:20:08.4112+00');
INSERT INTO public.schema_functions VALUES ('push_requests_completed_on_update.sql', '8ee0ee484a24d815', '2026-12-07 11:20:08.568067+00');
INSERT INTO public.schema_functions VALUES ('push_requests_completed_on_insert.sql', '4213a42c1fb5017f', '2026-12-07 11:20:08.711868+00');
INSERT INTO public.schema_functions VALUES ('live_activities_finished.sql', 'c942e201a472d8ed', '2026-12-07 11:20:09.133444+00');
INSERT INTO public.schema_functions VALUES ('channel_open.sql', '5dc223de45679791', '2026-12-07 11:20:09.553458+00');
INSERT INTO public.schema_functions VALUES ('channel_change.sql', '18b783554f624467', '2026-12-07 11:20:10.046612+00');
INSERT INTO public.schema_functions VALUES ('channel_claim.sql', 'ad7376ab17d152d6', '2026-12-07 11:20:10.329504+00');
INSERT INTO public.schema_functions VALUES ('channel_record.sql', '7f94cf757cbf5d7f', '2026-12-07 11:20:10.602902+00');
INSERT INTO public.schema_functions VALUES ('admin_audit.sql', '16017ddfad78077c', '2026-12-07 11:20:11.073448+00');
INSERT INTO public.schema_functions VALUES ('partners_audit.sql', '701dee1eb333e5b8', '2026-12-07 11:20:11.500818+00');
INSERT INTO public.schema_functions VALUES ('partners_audited.sql', '376d43ab9110f888', '2026-12-07 11:20:11.891567+00');
INSERT INTO public.schema_functions VALUES ('console_sessions_audit.sql', 'ac97df5ceb1a88e7', '2026-12-07 11:20:12.521454+00');
INSERT INTO public.schema_functions VALUES ('console_sessions_audited.sql', '5722888778c35303', '2026-12-07 11:20:12.889452+00');


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES (1, '001_directory.sql', 'be429bf1f0737ad5', '2026-12-07 11:19:33.333453+00');
INSERT INTO public.schema_migrations VALUES (2, '002_partners.sql', 'f44fb999f117f1d6', '2026-12-07 11:19:34.165448+00');
INSERT INTO public.schema_migrations VALUES (3, '003_requests.sql', '86f03080d8094a4f', '2026-12-07 11:19:34.377492+00');
INSERT INTO public.schema_migrations VALUES (4, '004_outbox.sql', '9cb51298bd465070', '2026-12-07 11:19:35.037479+00');
INSERT INTO public.schema_migrations VALUES (5, '005_push_functions.sql', 'ddb75a4322e165f3', '2026-12-07 11:19:35.737461+00');
INSERT INTO public.schema_migrations VALUES (6, '006_worker.sql', '7f595c513aadf03c', '2026-12-07 11:19:36.141445+00');
INSERT INTO public.schema_migrations VALUES (7, '007_edges.sql', 'f46173ab6a438e36', '2026-12-07 11:19:36.663786+00');
INSERT INTO public.schema_migrations VALUES (8, '008_setup_faults.sql', 'efe9323b117ca9e2', '2026-12-07 11:19:37.578732+00');
INSERT INTO public.schema_migrations VALUES (9, '009_live_activities.sql', 'cf8c73619b9f90f5', '2026-12-07 11:19:38.189155+00');
INSERT INTO public.schema_migrations VALUES (10, '010_operations.sql', '766d6954e207afe3', '2026-12-07 11:19:39.133454+00');
INSERT INTO public.schema_migrations VALUES (11, '011_backfill.sql', 'c23d0173e2e88627', '2026-12-07 11:19:39.497441+00');
INSERT INTO public.schema_migrations VALUES (12, '012_claim_bulk_limit.sql', '1d79d781b711ab0d', '2026-12-07 11:19:40.009443+00');
INSERT INTO public.schema_migrations VALUES (13, '013_intake_push.sql', 'e60cdf11e586c961', '2026-12-07 11:19:40.489446+00');
INSERT INTO public.schema_migrations VALUES (14, '014_drain.sql', '41f95489c913d76c', '2026-12-07 11:19:40.953442+00');
INSERT INTO public.schema_migrations VALUES (15, '015_delivery_costs.sql', '4afb045f49a3de5b', '2026-12-07 11:19:41.421653+00');
INSERT INTO public.schema_migrations VALUES (16, '016_delivery_groups.sql', 'fb9959b27e26e19d', '2026-12-07 11:19:41.777441+00');
INSERT INTO public.schema_migrations VALUES (17, '017_claim_one_scan.sql', 'e2b086b5b8547457', '2026-12-07 11:19:42.369448+00');
INSERT INTO public.schema_migrations VALUES (18, '018_groups_sent_whole.sql', '699a664c7d032ec0', '2026-12-07 11:19:42.681448+00');
INSERT INTO public.schema_migrations VALUES (19, '019_partner_icons.sql', '321f8d420bb4260', '2026-12-07 11:19:42.885445+00');
INSERT INTO public.schema_migrations VALUES (20, '020_webhooks.sql', 'a048a21cc3568156', '2026-12-07 11:19:43.085026+00');
INSERT INTO public.schema_migrations VALUES (21, '021_intake_push_slots.sql', '2cf30eecb0c38bfa', '2026-12-07 11:19:43.513452+00');
INSERT INTO public.schema_migrations VALUES (22, '022_claim_opt_out_once.sql', 'd4101b4753edb786', '2026-12-07 11:19:43.649463+00');
INSERT INTO public.schema_migrations VALUES (23, '023_history_arrays_without_statistics.sql', '62e608c8445d7f71', '2026-12-07 11:19:43.913486+00');
INSERT INTO public.schema_migrations VALUES (24, '024_outbox_full_pages.sql', '50e6893314bd56eb', '2026-12-07 11:19:44.165449+00');
INSERT INTO public.schema_migrations VALUES (25, '025_request_counts_by_key.sql', '8af47153be5df48f', '2026-12-07 11:19:44.493467+00');
INSERT INTO public.schema_migrations VALUES (26, '026_webhook_events_only_with_webhook.sql', 'f02d72461e07dcb', '2026-12-07 11:19:44.5783+00');
INSERT INTO public.schema_migrations VALUES (27, '027_token_health.sql', 'f1511dad4cebe178', '2026-12-07 11:19:44.641854+00');
INSERT INTO public.schema_migrations VALUES (28, '028_partner_sound_interruption.sql', 'c9807bdacd38eff0', '2026-12-07 11:19:44.873681+00');
INSERT INTO public.schema_migrations VALUES (29, '029_reminders.sql', '817d5574e06f08c4', '2026-12-07 11:19:45.249555+00');
INSERT INTO public.schema_migrations VALUES (30, '030_live_activity_budgets.sql', 'b51cfe0f372b5828', '2026-12-07 11:19:45.893459+00');
INSERT INTO public.schema_migrations VALUES (31, '031_push_to_start_per_template.sql', '8823647ac2f62f7b', '2026-12-07 11:19:46.213574+00');
INSERT INTO public.schema_migrations VALUES (32, '032_activity_device_state.sql', '7b3e708a0d7b91e6', '2026-12-07 11:19:46.413626+00');
INSERT INTO public.schema_migrations VALUES (33, '033_live_activity_events.sql', '57c50b98cf1c6428', '2026-12-07 11:19:46.633556+00');
INSERT INTO public.schema_migrations VALUES (34, '034_live_channels.sql', '8c43f55c31a35cad', '2026-12-07 11:19:46.761441+00');
INSERT INTO public.schema_migrations VALUES (35, '035_console.sql', '61b48855a22f0a0c', '2026-12-07 11:19:46.990074+00');
INSERT INTO public.schema_migrations VALUES (36, '036_rate_windows.sql', 'ea63a6c7ff91e373', '2026-12-07 11:19:47.58945+00');
INSERT INTO public.schema_migrations VALUES (37, '037_intake_push_notify.sql', '10dba451d0733224', '2026-12-07 11:19:48.12148+00');
INSERT INTO public.schema_migrations VALUES (38, '038_claim_listed_rows.sql', 'd3609bfa1db2f316', '2026-12-07 11:19:48.50948+00');
INSERT INTO public.schema_migrations VALUES (39, '039_claim_listed_rows_statement.sql', '7fff2b2ff37edcd9', '2026-12-07 11:19:48.925468+00');
INSERT INTO public.schema_migrations VALUES (40, '040_delivery_domains.sql', '1938c0711ae56ffb', '2026-12-07 11:19:49.241475+00');
INSERT INTO public.schema_migrations VALUES (41, '041_rate_counts_branches.sql', 'd20d2149bc435403', '2026-12-07 11:19:49.953459+00');
INSERT INTO public.schema_migrations VALUES (42, '042_intake_lease.sql', 'b47e58fd84899949', '2026-12-07 11:19:50.249466+00');
INSERT INTO public.schema_migrations VALUES (43, '043_leased_rows_carried.sql', 'dc4639c2412b9cc5', '2026-12-07 11:19:50.609487+00');
INSERT INTO public.schema_migrations VALUES (44, '044_resolve_lines.sql', '20d1333df0108fa3', '2026-12-07 11:19:51.073461+00');
INSERT INTO public.schema_migrations VALUES (45, '045_partner_previous_key.sql', '6c2eea5526fb4b14', '2026-12-07 11:19:51.749453+00');
INSERT INTO public.schema_migrations VALUES (46, '046_reminder_idempotency.sql', '245ee047ddd97f1', '2026-12-07 11:19:52.153437+00');
INSERT INTO public.schema_migrations VALUES (47, '047_admin_audit.sql', '56e262167ac7cdf9', '2026-12-07 11:19:52.556971+00');


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
-- Data for Name: worker_heartbeats; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: worker_listeners; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Name: admin_audit_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.admin_audit_id_seq', 1, false);


--
-- Name: admin_audit admin_audit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.admin_audit
    ADD CONSTRAINT admin_audit_pkey PRIMARY KEY (id);


--
-- Name: backfill_keys backfill_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.backfill_keys
    ADD CONSTRAINT backfill_keys_pkey PRIMARY KEY (partner_id, key);


--
-- Name: console_sessions console_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.console_sessions
    ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (token_hash);


--
-- Name: deliveries deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);


--
-- Name: device_push_to_start_tokens device_push_to_start_tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_push_to_start_tokens
    ADD CONSTRAINT device_push_to_start_tokens_pkey PRIMARY KEY (user_id, device_id, template);


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
-- Name: live_activity_events live_activity_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events
    ADD CONSTRAINT live_activity_events_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_events_2026_11 live_activity_events_2026_11_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events_2026_11
    ADD CONSTRAINT live_activity_events_2026_11_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_events_2026_12 live_activity_events_2026_12_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events_2026_12
    ADD CONSTRAINT live_activity_events_2026_12_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_events_2027_01 live_activity_events_2027_01_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events_2027_01
    ADD CONSTRAINT live_activity_events_2027_01_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_events_2027_02 live_activity_events_2027_02_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events_2027_02
    ADD CONSTRAINT live_activity_events_2027_02_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_events_2027_03 live_activity_events_2027_03_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_events_2027_03
    ADD CONSTRAINT live_activity_events_2027_03_pkey PRIMARY KEY (id, created_at);


--
-- Name: live_activity_targets live_activity_targets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_activity_targets
    ADD CONSTRAINT live_activity_targets_pkey PRIMARY KEY (activity_id, device_id);


--
-- Name: live_channel_events live_channel_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_channel_events
    ADD CONSTRAINT live_channel_events_pkey PRIMARY KEY (id);


--
-- Name: live_channels live_channels_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_channels
    ADD CONSTRAINT live_channels_pkey PRIMARY KEY (id);


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
-- Name: partners partners_previous_key_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.partners
    ADD CONSTRAINT partners_previous_key_hash_key UNIQUE (previous_key_hash);


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
-- Name: rate_windows rate_windows_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.rate_windows
    ADD CONSTRAINT rate_windows_pkey PRIMARY KEY (partner_id);


--
-- Name: reminders reminders_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reminders
    ADD CONSTRAINT reminders_pkey PRIMARY KEY (id);


--
-- Name: reminders reminders_request_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reminders
    ADD CONSTRAINT reminders_request_id_key UNIQUE (request_id);


--
-- Name: schema_functions schema_functions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_functions
    ADD CONSTRAINT schema_functions_pkey PRIMARY KEY (name);


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
-- Name: worker_heartbeats worker_heartbeats_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_heartbeats
    ADD CONSTRAINT worker_heartbeats_pkey PRIMARY KEY (worker_id);


--
-- Name: worker_listeners worker_listeners_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.worker_listeners
    ADD CONSTRAINT worker_listeners_pkey PRIMARY KEY (pid);


--
-- Name: admin_audit_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX admin_audit_at ON public.admin_audit USING btree (at);


--
-- Name: admin_audit_partner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX admin_audit_partner ON public.admin_audit USING btree (partner_id, id) WHERE (partner_id IS NOT NULL);


--
-- Name: console_sessions_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX console_sessions_expires ON public.console_sessions USING btree (expires_at);


--
-- Name: deliveries_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_activity ON public.deliveries USING btree (activity_id, device_id) WHERE (activity_id IS NOT NULL);


--
-- Name: deliveries_due_partner; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_due_partner ON public.deliveries USING btree (lane, partner_id, available_at, member_count) WHERE ((state)::text = 'pending'::text);


--
-- Name: deliveries_lease; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX deliveries_lease ON public.deliveries USING btree (lease_expires_at) WHERE ((state)::text = 'leased'::text);


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
-- Name: delivery_history_token_invalid; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_token_invalid ON ONLY public.delivery_history USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


--
-- Name: delivery_history_2026_11_finished_at_idx2; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_11_finished_at_idx2 ON public.delivery_history_2026_11 USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


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
-- Name: delivery_history_2026_12_finished_at_idx2; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2026_12_finished_at_idx2 ON public.delivery_history_2026_12 USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


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
-- Name: delivery_history_2027_01_finished_at_idx2; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_01_finished_at_idx2 ON public.delivery_history_2027_01 USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


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
-- Name: delivery_history_2027_02_finished_at_idx2; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_02_finished_at_idx2 ON public.delivery_history_2027_02 USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


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
-- Name: delivery_history_2027_03_finished_at_idx2; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_finished_at_idx2 ON public.delivery_history_2027_03 USING btree (finished_at) WHERE (outcome = 'token_invalid'::text);


--
-- Name: delivery_history_2027_03_partner_id_finished_at_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_partner_id_finished_at_idx ON public.delivery_history_2027_03 USING btree (partner_id, finished_at) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: delivery_history_2027_03_request_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX delivery_history_2027_03_request_id_idx ON public.delivery_history_2027_03 USING btree (request_id) WHERE ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));


--
-- Name: device_push_to_start_tokens_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX device_push_to_start_tokens_token ON public.device_push_to_start_tokens USING hash (token);


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
-- Name: live_activities_channel; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activities_channel ON public.live_activities USING btree (channel_id) WHERE ((status = 'active'::text) AND (channel_id IS NOT NULL));


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
-- Name: live_activities_user_starts; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activities_user_starts ON public.live_activities USING btree (user_id, created_at);


--
-- Name: live_activity_events_activity; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_activity ON ONLY public.live_activity_events USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_events_2026_11_activity_id_created_at_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_2026_11_activity_id_created_at_id_idx ON public.live_activity_events_2026_11 USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_events_2026_12_activity_id_created_at_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_2026_12_activity_id_created_at_id_idx ON public.live_activity_events_2026_12 USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_events_2027_01_activity_id_created_at_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_2027_01_activity_id_created_at_id_idx ON public.live_activity_events_2027_01 USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_events_2027_02_activity_id_created_at_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_2027_02_activity_id_created_at_id_idx ON public.live_activity_events_2027_02 USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_events_2027_03_activity_id_created_at_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_events_2027_03_activity_id_created_at_id_idx ON public.live_activity_events_2027_03 USING btree (activity_id, created_at DESC, id DESC);


--
-- Name: live_activity_targets_awaiting_token; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_activity_targets_awaiting_token ON public.live_activity_targets USING btree (start_sent_at) WHERE ((service = 'apns'::text) AND (update_token IS NULL) AND (device_state IS NULL) AND (start_sent_at IS NOT NULL));


--
-- Name: live_channel_events_channel; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_channel_events_channel ON public.live_channel_events USING btree (channel_id, created_at DESC, id DESC);


--
-- Name: live_channel_events_pending; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_channel_events_pending ON public.live_channel_events USING btree (channel_id, version) WHERE (outcome = 'pending'::text);


--
-- Name: live_channels_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_channels_due ON public.live_channels USING btree (next_at) WHERE (status = ANY (ARRAY['opening'::text, 'open'::text, 'ending'::text]));


--
-- Name: live_channels_finished; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_channels_finished ON public.live_channels USING btree (updated_at) WHERE (status = ANY (ARRAY['ended'::text, 'failed'::text]));


--
-- Name: live_channels_mini_app; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX live_channels_mini_app ON public.live_channels USING btree (mini_app_id, created_at) WHERE (status = ANY (ARRAY['opening'::text, 'open'::text]));


--
-- Name: partners_active_mini_app; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX partners_active_mini_app ON public.partners USING btree (mini_app_id) WHERE (revoked_at IS NULL);


--
-- Name: push_requests_mini_app; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_mini_app ON ONLY public.push_requests USING btree (mini_app_id, id);


--
-- Name: push_requests_2026_11_mini_app_id_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_2026_11_mini_app_id_id_idx ON public.push_requests_2026_11 USING btree (mini_app_id, id);


--
-- Name: push_requests_2026_12_mini_app_id_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_2026_12_mini_app_id_id_idx ON public.push_requests_2026_12 USING btree (mini_app_id, id);


--
-- Name: push_requests_2027_01_mini_app_id_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_2027_01_mini_app_id_id_idx ON public.push_requests_2027_01 USING btree (mini_app_id, id);


--
-- Name: push_requests_2027_02_mini_app_id_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_2027_02_mini_app_id_id_idx ON public.push_requests_2027_02 USING btree (mini_app_id, id);


--
-- Name: push_requests_2027_03_mini_app_id_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX push_requests_2027_03_mini_app_id_id_idx ON public.push_requests_2027_03 USING btree (mini_app_id, id);


--
-- Name: reminders_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reminders_at ON public.reminders USING btree (at);


--
-- Name: reminders_idempotency; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX reminders_idempotency ON public.reminders USING btree (user_id, idempotency_key) WHERE (idempotency_key IS NOT NULL);


--
-- Name: reminders_scheduled; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX reminders_scheduled ON public.reminders USING btree (user_id, mini_app_id, at) WHERE (status = 'scheduled'::text);


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
-- Name: worker_heartbeats_last_seen; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX worker_heartbeats_last_seen ON public.worker_heartbeats USING btree (last_seen_at);


--
-- Name: delivery_history_2026_11_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable ATTACH PARTITION public.delivery_history_2026_11_finished_at_idx;


--
-- Name: delivery_history_2026_11_finished_at_idx1; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_finished ATTACH PARTITION public.delivery_history_2026_11_finished_at_idx1;


--
-- Name: delivery_history_2026_11_finished_at_idx2; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_token_invalid ATTACH PARTITION public.delivery_history_2026_11_finished_at_idx2;


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
-- Name: delivery_history_2026_12_finished_at_idx2; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_token_invalid ATTACH PARTITION public.delivery_history_2026_12_finished_at_idx2;


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
-- Name: delivery_history_2027_01_finished_at_idx2; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_token_invalid ATTACH PARTITION public.delivery_history_2027_01_finished_at_idx2;


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
-- Name: delivery_history_2027_02_finished_at_idx2; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_token_invalid ATTACH PARTITION public.delivery_history_2027_02_finished_at_idx2;


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
-- Name: delivery_history_2027_03_finished_at_idx2; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_token_invalid ATTACH PARTITION public.delivery_history_2027_03_finished_at_idx2;


--
-- Name: delivery_history_2027_03_partner_id_finished_at_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_replayable_partner ATTACH PARTITION public.delivery_history_2027_03_partner_id_finished_at_idx;


--
-- Name: delivery_history_2027_03_request_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.delivery_history_request ATTACH PARTITION public.delivery_history_2027_03_request_id_idx;


--
-- Name: live_activity_events_2026_11_activity_id_created_at_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_activity ATTACH PARTITION public.live_activity_events_2026_11_activity_id_created_at_id_idx;


--
-- Name: live_activity_events_2026_11_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_pkey ATTACH PARTITION public.live_activity_events_2026_11_pkey;


--
-- Name: live_activity_events_2026_12_activity_id_created_at_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_activity ATTACH PARTITION public.live_activity_events_2026_12_activity_id_created_at_id_idx;


--
-- Name: live_activity_events_2026_12_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_pkey ATTACH PARTITION public.live_activity_events_2026_12_pkey;


--
-- Name: live_activity_events_2027_01_activity_id_created_at_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_activity ATTACH PARTITION public.live_activity_events_2027_01_activity_id_created_at_id_idx;


--
-- Name: live_activity_events_2027_01_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_pkey ATTACH PARTITION public.live_activity_events_2027_01_pkey;


--
-- Name: live_activity_events_2027_02_activity_id_created_at_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_activity ATTACH PARTITION public.live_activity_events_2027_02_activity_id_created_at_id_idx;


--
-- Name: live_activity_events_2027_02_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_pkey ATTACH PARTITION public.live_activity_events_2027_02_pkey;


--
-- Name: live_activity_events_2027_03_activity_id_created_at_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_activity ATTACH PARTITION public.live_activity_events_2027_03_activity_id_created_at_id_idx;


--
-- Name: live_activity_events_2027_03_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.live_activity_events_pkey ATTACH PARTITION public.live_activity_events_2027_03_pkey;


--
-- Name: push_requests_2026_11_mini_app_id_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_mini_app ATTACH PARTITION public.push_requests_2026_11_mini_app_id_id_idx;


--
-- Name: push_requests_2026_11_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2026_11_pkey;


--
-- Name: push_requests_2026_12_mini_app_id_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_mini_app ATTACH PARTITION public.push_requests_2026_12_mini_app_id_id_idx;


--
-- Name: push_requests_2026_12_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2026_12_pkey;


--
-- Name: push_requests_2027_01_mini_app_id_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_mini_app ATTACH PARTITION public.push_requests_2027_01_mini_app_id_id_idx;


--
-- Name: push_requests_2027_01_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_01_pkey;


--
-- Name: push_requests_2027_02_mini_app_id_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_mini_app ATTACH PARTITION public.push_requests_2027_02_mini_app_id_id_idx;


--
-- Name: push_requests_2027_02_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_02_pkey;


--
-- Name: push_requests_2027_03_mini_app_id_id_idx; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_mini_app ATTACH PARTITION public.push_requests_2027_03_mini_app_id_id_idx;


--
-- Name: push_requests_2027_03_pkey; Type: INDEX ATTACH; Schema: public; Owner: -
--

ALTER INDEX public.push_requests_pkey ATTACH PARTITION public.push_requests_2027_03_pkey;


--
-- Name: console_sessions console_sessions_audited; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER console_sessions_audited AFTER INSERT OR UPDATE OF revoked_at ON public.console_sessions FOR EACH ROW EXECUTE FUNCTION public.herald_console_sessions_audit();


--
-- Name: live_activities live_activities_finished; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER live_activities_finished AFTER UPDATE OF status ON public.live_activities FOR EACH ROW WHEN (((old.status = 'active'::text) AND (new.status = ANY (ARRAY['ended'::text, 'expired'::text, 'dismissed'::text])))) EXECUTE FUNCTION public.herald_activity_finished_event();


--
-- Name: partners partners_audited; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER partners_audited AFTER INSERT OR UPDATE ON public.partners FOR EACH ROW EXECUTE FUNCTION public.herald_partners_audit();


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
-- Name: device_push_to_start_tokens device_push_to_start_tokens_user_id_device_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.device_push_to_start_tokens
    ADD CONSTRAINT device_push_to_start_tokens_user_id_device_id_fkey FOREIGN KEY (user_id, device_id) REFERENCES public.devices(user_id, device_id) ON DELETE CASCADE;


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
-- Name: live_channel_events live_channel_events_channel_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.live_channel_events
    ADD CONSTRAINT live_channel_events_channel_id_fkey FOREIGN KEY (channel_id) REFERENCES public.live_channels(id) ON DELETE CASCADE;


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
-- Name: reminders reminders_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reminders
    ADD CONSTRAINT reminders_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


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


