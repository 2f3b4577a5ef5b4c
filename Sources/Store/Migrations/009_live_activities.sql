-- Live Activities: one row per activity, one per (activity, device) it was started on, and
-- their deliveries in the same outbox as pushes.
--
-- Payloads are rendered and signed at intake, like a push's (the intake alone holds the signing keys).
-- So that the TTL sweep and a late token need no rendering, each activity keeps the payloads they send:
-- the newest update for an iPhone whose activity token is not known yet, and the end (the TTL's end
-- while the activity is active, the end that was sent once it ended).
--
-- Plans: every function here is planned once per session (force_generic_plan, as the worker's claim is)
-- and may not scan a table sequentially. Their tables start empty and grow fast (a sweep queues 100,000
-- ends in a minute): a plan cached while they were small read whole tables on each call long after
-- (bench/live-activities measured claims of 160 ms instead of 20). Each statement is written for an
-- index (Tests/StoreTests/ActivityQueryPlanTests.swift); enable_seqscan = off keeps the planner to it.
--
-- Coalescing: an activity has at most one pending delivery per device. A change rewrites that row's
-- payload (the newest state wins) instead of queuing another; a start not sent yet takes the new state
-- and stays a start. A row already in flight is not touched: the change queues one new row. Should an
-- older row come back to pending (a retry, a rescued lease) beside a newer one, the claim finds it
-- superseded and sends only the newer.

CREATE TABLE live_activities (
    id                   uuid PRIMARY KEY,
    partner_id           uuid NOT NULL,
    mini_app_id          text NOT NULL,
    user_id              text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    template             text NOT NULL CHECK (template IN ('progress', 'status', 'countdown')),
    attributes           jsonb NOT NULL,
    state                jsonb NOT NULL,
    -- The start's alert, which a start not yet sent keeps when it takes a newer state.
    start_alert          jsonb NOT NULL,
    status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended', 'replaced', 'expired')),
    -- Bumped by every change: an update merges into the version it read, or is retried on a newer one.
    version              integer NOT NULL DEFAULT 1,
    -- aps.timestamp of the newest event, strictly increasing per activity.
    last_timestamp       bigint NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    expires_at           timestamptz NOT NULL,
    ended_at             timestamptz,
    dismiss_at           timestamptz,
    apns_update_payload  text,
    apns_update_priority smallint,
    apns_end_payload     text NOT NULL,
    fcm_end_payload      text NOT NULL,
    -- The timestamp inside the end payloads.
    end_timestamp        bigint NOT NULL
);
-- Statistics that follow the table's fast growth and churn (every activity is updated many times).
ALTER TABLE live_activities SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05);
-- At most one active activity per (user, mini-app); a start replaces the active one.
CREATE UNIQUE INDEX live_activities_one_active ON live_activities (user_id, mini_app_id) WHERE status = 'active';
-- The TTL sweep reads due activities in expiry order, active ones only.
CREATE INDEX live_activities_due ON live_activities (expires_at) WHERE status = 'active';
-- Retention deletes finished activities by age.
CREATE INDEX live_activities_ended ON live_activities (ended_at) WHERE status <> 'active';

CREATE TABLE live_activity_targets (
    activity_id                 uuid NOT NULL REFERENCES live_activities (id) ON DELETE CASCADE,
    device_id                   text NOT NULL,
    service                     text NOT NULL CHECK (service IN ('apns', 'fcm')),
    -- iOS: the activity's own update token, reported by the host after the start arrived.
    update_token                text,
    update_token_invalidated_at timestamptz,
    -- iOS: an update or end that came before the update token; sent (newest state) when it comes.
    held_event                  text CHECK (held_event IN ('update', 'end')),
    PRIMARY KEY (activity_id, device_id)
);

ALTER TABLE deliveries
    ADD COLUMN activity_id uuid,
    ADD COLUMN activity_event text CHECK (activity_event IN ('start', 'update', 'end')),
    -- apns-priority of a Live Activity push (5 silent, 10 with an alert); pushes are always 10.
    ADD COLUMN priority smallint;
-- The pending and in-flight rows of one activity on one device (coalescing, supersession).
CREATE INDEX deliveries_activity ON deliveries (activity_id, device_id) WHERE activity_id IS NOT NULL;

ALTER TABLE delivery_history ADD COLUMN activity_event text;
ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_outcome_check;
ALTER TABLE delivery_history ADD CONSTRAINT delivery_history_outcome_check
    CHECK (outcome IN ('sent', 'failed', 'dead', 'token_invalid', 'expired', 'suppressed', 'superseded'));

-- An activity's answers are 201 or 200, a push's 202: the replay repeats the status too.
ALTER TABLE idempotency_keys ADD COLUMN status smallint NOT NULL DEFAULT 202;

-- Queues one event of each activity in `p_ids` (the same event for all) on every device it was
-- started on, or on `p_device` only, new rows in lane `p_lane`. Per device:
--   - a start still pending: an update gives it the new state (it stays a start, `p_*_start`); an
--     end makes it moot (the phone never showed the activity): it is finished as 'superseded';
--   - otherwise the pending row, if any, takes the new payload; else a new row is queued;
--   - an iPhone whose activity token is not known yet holds the event (an end outranks an update).
-- The caller holds the activities' row locks, so no other change of them runs meanwhile.
CREATE FUNCTION herald_activity_dispatch(p_ids uuid[], p_event text, p_apns text[], p_apns_start text[],
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
        SELECT gen_random_uuid(), a.id, a.created_at, a.partner_id, p_lane, t.service, a.user_id, t.device_id,
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

-- The audience of a start: the recipient's user in the tenant, whether it has a recent session with the
-- mini-app and opted out of it, its devices that can show an activity (an iPhone with a push-to-start
-- token, an Android phone with an FCM token, neither invalidated), and the activity a start would replace.
CREATE FUNCTION herald_activity_audience(p_tenant text, p_email text, p_wallet text, p_mini_app text,
                                         p_session_since timestamptz)
RETURNS TABLE (user_id text, has_session boolean, opted_out boolean, devices text, old_id uuid, old_template text, old_attributes text, old_state text,
               old_last_timestamp bigint, old_created_at timestamptz, old_expires_at timestamptz)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
-- plpgsql, not sql: a sql function is planned again on every call.
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

-- Records an idempotency key for a change of an activity; false when another request holds it.
CREATE FUNCTION herald_activity_claim_key(p_partner uuid, p_key text, p_body_hash text, p_request uuid,
                                          p_response text, p_status smallint, p_now timestamptz)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- A start: ends the active activity of the same user and mini-app (status 'replaced', with the end the
-- intake rendered for it, or, should another start have replaced that one meanwhile, the stored TTL end
-- of whichever is active), then writes the new activity, its targets and one start per target.
-- Returns 'started', or 'duplicate' when another request holds the idempotency key (nothing written).
CREATE FUNCTION herald_activity_start(
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
    SELECT gen_random_uuid(), p_id, p_now, p_partner, 0, x.service, p_user, x.device_id, x.environment,
           CASE x.service WHEN 'apns' THEN p_apns_start ELSE p_fcm_start END, p_now, p_expires, p_id, 'start',
           CASE x.service WHEN 'apns' THEN 10::smallint END
      FROM unnest(p_devices, p_services, p_environments) AS x (device_id, service, environment);
    RETURN 'started';
END
$$;

-- The checks every change of an activity makes, under the activity's row lock, then its Idempotency-Key.
-- Returns NULL when the change may go ahead, else why not: 'not_found' (no such activity of this
-- partner), 'ended' (ended, replaced, expired, or past its TTL before the sweep), 'conflict' (changed
-- since the caller read it), 'duplicate' (another request holds the key).
CREATE FUNCTION herald_activity_begin_change(p_partner uuid, p_id uuid, p_version integer, p_key text,
                                             p_body_hash text, p_response text, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- An update merged by the intake into version `p_version`. Returns 'updated' or a refusal of
-- herald_activity_begin_change.
CREATE FUNCTION herald_activity_update(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_state jsonb, p_expires timestamptz, p_timestamp bigint, p_apns text, p_apns_start text,
    p_fcm text, p_fcm_start text, p_priority smallint, p_apns_end text, p_fcm_end text, p_end_timestamp bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- The partner's end. Returns 'ended_now' or a refusal of herald_activity_begin_change.
CREATE FUNCTION herald_activity_end(
    p_partner uuid, p_key text, p_body_hash text, p_response text, p_id uuid, p_version integer,
    p_now timestamptz, p_state jsonb, p_dismiss timestamptz, p_timestamp bigint, p_apns text, p_fcm text,
    p_priority smallint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- The host reports an activity's update token for one iPhone. Returns 'not_found' (no such activity or
-- it was not started on that device), 'not_ios' (the device is an Android phone), 'unchanged', 'stored',
-- or 'sent' (the token released an update or end held for it).
CREATE FUNCTION herald_activity_token(p_id uuid, p_device text, p_token text)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- One batch of the TTL sweep: up to `p_limit` active activities past their expiry become 'expired' and
-- their stored ends are queued (bulk lane). SKIP LOCKED: several workers sweep at once, each activity exactly once,
-- and an activity a partner is changing right now is taken by the next sweep. Returns how many expired.
CREATE FUNCTION herald_expire_activities(p_limit integer)
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- The claim returns each row's Live Activity event and priority, picks the token the event goes to,
-- and finds starts of ended activities and rows with a newer row for the same device 'superseded'.
DROP FUNCTION herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[]);

CREATE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                        p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                        p_cursor_times timestamptz[])
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text, lane smallint, partner_id uuid,
               available_at timestamptz, bundle_id text,
               activity_event text, priority smallint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
-- Never JIT: the generic plan's cost grows with the table (a 10M-row backlog estimates ~800k), which
-- made Postgres JIT-compile the claim on every call (~140 ms for a 5 ms query).
SET jit = off
-- As the activity functions above: index paths only, whatever the plan cached when the tables were small.
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
    v_lane     smallint;
    v_partners uuid[];
    v_floors   timestamptz[];
    v_quota    integer;
    v_taken    integer := 0;
    v_claimed  uuid[] := '{}';
    v_round    uuid[];
    v_round_partners uuid[];
BEGIN
    FOREACH v_lane IN ARRAY ARRAY[0, 1]::smallint[] LOOP
        EXIT WHEN v_taken >= p_limit;
        -- Every partner (a small table), with where its queue's live part starts if known. A partner
        -- without pending rows costs one index probe.
        SELECT coalesce(array_agg(p.id ORDER BY p.id), '{}'),
               coalesce(array_agg(c.cursor_time - interval '10 seconds' ORDER BY p.id), '{}')
          INTO v_partners, v_floors
          FROM partners p
          LEFT JOIN unnest(p_cursor_lanes, p_cursor_partners, p_cursor_times) AS c (lane, partner_id, cursor_time)
            ON c.partner_id = p.id AND c.lane = v_lane;

        -- Rounds: every partner still in the running gets an equal share of what is left.
        WHILE cardinality(v_partners) > 0 AND v_taken < p_limit LOOP
            v_quota := ceil((p_limit - v_taken)::numeric / cardinality(v_partners))::integer;
            SELECT coalesce(array_agg(x.id), '{}'), coalesce(array_agg(x.partner_id), '{}')
              INTO v_round, v_round_partners
              FROM (SELECT y.id, y.partner_id
                      FROM unnest(v_partners, v_floors) AS pp (partner_id, floor),
                           LATERAL (SELECT d.id, d.partner_id FROM deliveries d
                                     WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id = pp.partner_id
                                       AND d.available_at >= coalesce(pp.floor, '-infinity')
                                       AND d.available_at <= now() AND d.service = ANY (p_services)
                                       -- One send at a time per activity and device: a newer state waits
                                       -- for the one in flight (and takes every update meanwhile), so the
                                       -- phone gets them in order and only the newest.
                                       AND (d.activity_id IS NULL
                                            OR NOT EXISTS (SELECT 1 FROM deliveries l
                                                            WHERE l.activity_id = d.activity_id
                                                              AND l.device_id = d.device_id AND l.state = 'leased'))
                                     ORDER BY d.available_at
                                     LIMIT v_quota
                                       FOR UPDATE SKIP LOCKED) y
                     LIMIT p_limit - v_taken) x;
            EXIT WHEN cardinality(v_round) = 0;
            -- By id from an array: always primary-key probes (a join with the picked rows could be
            -- planned as a scan of the whole table, the generic plan not knowing how few they are).
            UPDATE deliveries d
               SET state = 'leased', leased_by = p_worker, attempts = d.attempts + 1,
                   lease_expires_at = now() + make_interval(secs => p_lease_seconds)
             WHERE d.id = ANY (v_round);
            -- Partners that filled their share may have more: they stay for the next round.
            SELECT coalesce(array_agg(f.partner_id), '{}'), coalesce(array_agg(f.floor), '{}')
              INTO v_partners, v_floors
              FROM unnest(v_partners, v_floors) AS f (partner_id, floor)
             WHERE f.partner_id IN (SELECT r.partner_id FROM unnest(v_round_partners) AS r (partner_id)
                                     GROUP BY r.partner_id HAVING count(*) >= v_quota);
            v_claimed := v_claimed || v_round;
            v_taken := v_taken + cardinality(v_round);
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
               WHEN EXISTS (SELECT 1 FROM opt_outs o JOIN partners p ON p.mini_app_id = o.mini_app_id
                             WHERE p.id = d.partner_id AND o.user_id = d.user_id) THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id, d.activity_event, d.priority
      FROM deliveries d
      LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
      LEFT JOIN live_activities a ON a.id = d.activity_id
      LEFT JOIN live_activity_targets t ON t.activity_id = d.activity_id AND t.device_id = d.device_id
     WHERE d.id = ANY (v_claimed);
END
$$;

-- As in 008_setup_faults.sql; history keeps the Live Activity event, and a dead token is retired where it
-- lives (the device's token, its push-to-start token, or the activity's own update token).
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
BEGIN
    SELECT coalesce(array_agg(x.id) FILTER (WHERE x.outcome NOT IN ('retry', 'deferred')), '{}'),
           coalesce(array_agg(x.id) FILTER (WHERE x.outcome IN ('retry', 'deferred')), '{}'),
           coalesce(jsonb_object_agg(x.id::text, jsonb_build_array(x.outcome, nullif(x.error, ''),
                                                                    nullif(x.retry_at, ''), nullif(x.token, ''))), '{}')
      INTO v_final, v_retry, v_meta
      FROM unnest(p_ids, p_outcomes, p_errors, p_retry_at, p_tokens) AS x (id, outcome, error, retry_at, token);

    IF cardinality(v_final) > 0 THEN
        WITH finished AS (
            -- leased_by is set only while a row is leased, so it alone says "still mine"; a
            -- state = 'leased' condition would let the planner pick deliveries_lease and test every
            -- leased row of every worker against the id array.
            DELETE FROM deliveries d
             WHERE d.id = ANY (v_final) AND d.leased_by = p_worker
            RETURNING d.id, d.request_id, d.request_created_at, d.partner_id, d.lane, d.service, d.user_id,
                      d.device_id, d.attempts, d.created_at, d.activity_id, d.activity_event,
                      v_meta -> (d.id::text) ->> 0 AS outcome, v_meta -> (d.id::text) ->> 1 AS error,
                      v_meta -> (d.id::text) ->> 3 AS token
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at, activity_event)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts, error,
                   created_at, now(), activity_event
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
