-- Group rows: one outbox row for up to 50 deliveries of one
-- request to one (service, environment), so the claim's lease, the completion's delete and their index
-- entries are paid once per group instead of once per delivery. What a delivery costs Postgres as one row
-- each is measured in bench/queue-designs (the lease alone is what the minimal queue does in total).
--
-- A group row keeps its members in parallel arrays (delivery id, user, device, signed payload); the
-- arrays are TOASTed and an UPDATE that does not set them keeps their pointers, so the lease's new row
-- version stays small. Its own `id` is a fresh id that is no delivery's; `user_id`, `device_id` and
-- `payload` are empty. `members_done` lists the members (1-based positions) whose outcome is recorded:
-- a completion appends to it (no indexed column changes, so a HOT update) and deletes the group with its
-- last member; a member to retry leaves the group as a single row of its own. Everything else (rescue,
-- release, lease extension) acts on the group as on a single row, and a claim skips the done members.
--
-- Only the intake's multi-recipient pushes write groups (PushStore.enqueueSQL), for 16 or more deliveries
-- of one (service, environment); Live Activity rows, backfills, replays and retries stay single rows.
ALTER TABLE deliveries
    -- How many deliveries the row was written for (1 for a single row); never updated, so the due index
    -- can carry it (the queue gauge counts deliveries from the index alone) and a completion's update of
    -- members_done stays HOT.
    ADD COLUMN member_count   integer NOT NULL DEFAULT 1,
    ADD COLUMN members        uuid[],
    ADD COLUMN member_users   text[],
    ADD COLUMN member_devices text[],
    ADD COLUMN member_payloads text[],
    ADD COLUMN members_done   integer[],
    -- Evaluated on every UPDATE of the row (each lease, each completion): nothing here may read the
    -- member arrays' contents, which would detoast them (their lengths are the writer's, PushStore).
    ADD CONSTRAINT deliveries_members_shape CHECK (
        (members IS NULL) = (member_count = 1) AND (members IS NULL OR activity_id IS NULL));

-- History: the sent members of a group that one completion records are ONE history row (most of a drain),
-- with the members' ids, users and devices as arrays, `id` the group row's id and `user_id`/`device_id`
-- empty; every other outcome (what replay may pick, what an operator looks up) keeps a row per delivery.
-- bench/queue-designs measured the history row per delivery as most of what a group's delivery still
-- costs. Read per delivery through delivery_history_deliveries.
ALTER TABLE delivery_history
    ADD COLUMN members        uuid[],
    ADD COLUMN member_users   text[],
    ADD COLUMN member_devices text[];

-- Every recorded delivery, one row each: a sent group row's members unnested.
CREATE VIEW delivery_history_deliveries AS
SELECT coalesce(m.id, h.id) AS id, h.request_id, h.request_created_at, h.partner_id, h.lane, h.service,
       coalesce(m.user_id, h.user_id) AS user_id, coalesce(m.device_id, h.device_id) AS device_id, h.outcome,
       h.attempts, h.last_error, h.created_at, h.finished_at, h.activity_event, h.payload, h.replayed_at,
       CASE WHEN h.members IS NOT NULL THEN h.id END AS group_id
  FROM delivery_history h
  LEFT JOIN LATERAL unnest(h.members, h.member_users, h.member_devices) AS m (id, user_id, device_id) ON true;

-- The due index of 006_worker.sql, carrying member_count.
CREATE INDEX deliveries_due_partner_counted ON deliveries (lane, partner_id, available_at) INCLUDE (member_count)
    WHERE state = 'pending';
DROP INDEX deliveries_due_partner;
ALTER INDEX deliveries_due_partner_counted RENAME TO deliveries_due_partner;

-- How many deliveries a row still stands for: 1 for a single row, the members not yet done for a group.
CREATE FUNCTION herald_delivery_weight(p_member_count integer, p_done integer[]) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_member_count - coalesce(cardinality(p_done), 0) $$;

-- As in 014_drain.sql, counting deliveries (a group's members not yet done) against the quotas instead of
-- rows, and returning a group's members as rows of their own with the group's id and their position.
DROP FUNCTION herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[], integer);
CREATE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                        p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                        p_cursor_times timestamptz[], p_bulk_limit integer)
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text, lane smallint, partner_id uuid,
               available_at timestamptz, bundle_id text,
               activity_event text, priority smallint, group_id uuid, member integer)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
-- Never JIT: the generic plan's cost grows with the table (a 10M-row backlog estimates ~800k), which
-- made Postgres JIT-compile the claim on every call (~140 ms for a 5 ms query).
SET jit = off
-- As the activity functions: index paths only, whatever the plan cached when the tables were small.
SET enable_seqscan = off
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
        -- without pending rows costs one index probe.
        SELECT coalesce(array_agg(p.id ORDER BY p.id), '{}'),
               coalesce(array_agg(c.cursor_time - interval '10 seconds' ORDER BY p.id), '{}')
          INTO v_partners, v_floors
          FROM partners p
          LEFT JOIN unnest(p_cursor_lanes, p_cursor_partners, p_cursor_times) AS c (lane, partner_id, cursor_time)
            ON c.partner_id = p.id AND c.lane = v_lane;

        -- Only partners with due work take part (the rounds below cost a cursor per partner), each from
        -- its queue's head as found here: one index probe per partner, and the rounds' scans start
        -- past the dead entries this probe stepped over (a backlog's claimed rows before vacuum).
        SELECT coalesce(array_agg(pp.partner_id ORDER BY pp.o), '{}'), coalesce(array_agg(pp.head ORDER BY pp.o), '{}')
          INTO v_partners, v_floors
          FROM (SELECT q.partner_id, q.o,
                       (SELECT d.available_at FROM deliveries d
                         WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id = q.partner_id
                           AND d.available_at >= coalesce(q.floor, '-infinity')
                           AND d.available_at <= now() AND d.service = ANY (p_services)
                         ORDER BY d.available_at LIMIT 1) AS head
                  FROM unnest(v_partners, v_floors) WITH ORDINALITY AS q (partner_id, floor, o)) pp
         WHERE pp.head IS NOT NULL;

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
               WHEN EXISTS (SELECT 1 FROM opt_outs o JOIN partners p ON p.mini_app_id = o.mini_app_id
                             WHERE p.id = d.partner_id AND o.user_id = d.user_id) THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id, d.activity_event, d.priority, d.group_id, d.member
      -- The claimed deliveries: single rows as they are (no function scan per row), a group's members
      -- not yet done unnested with the group's columns.
      FROM (SELECT s.id, s.user_id, s.device_id, s.payload, NULL::uuid AS group_id, NULL::integer AS member,
                   s.service, s.environment, s.attempts, s.expires_at, s.activity_id, s.activity_event, s.created_at,
                   s.partner_id, s.lane, s.available_at, s.priority
              FROM deliveries s
             WHERE s.ctid = ANY (v_claimed) AND s.members IS NULL
            UNION ALL
            SELECT m.id, m.user_id, m.device_id, m.payload, g.id, m.member::integer,
                   g.service, g.environment, g.attempts, g.expires_at, g.activity_id, g.activity_event, g.created_at,
                   g.partner_id, g.lane, g.available_at, g.priority
              FROM deliveries g
             CROSS JOIN LATERAL unnest(g.members, g.member_users, g.member_devices, g.member_payloads)
                   WITH ORDINALITY AS m (id, user_id, device_id, payload, member)
             WHERE g.ctid = ANY (v_claimed) AND g.members IS NOT NULL
               AND NOT m.member = ANY (coalesce(g.members_done, '{}'))) d
      LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
      LEFT JOIN live_activities a ON a.id = d.activity_id
      LEFT JOIN live_activity_targets t ON t.activity_id = d.activity_id AND t.device_id = d.device_id;
END
$$;

-- As in 015_delivery_costs.sql, for group members too: p_groups[i] is the group row of p_ids[i] (NULL for a
-- single row) and p_members[i] its position there. A finished member is recorded from the group (the sent
-- ones together, above) and marked done; a member to retry leaves the group as a single pending row (its id, the group's
-- attempts); the group is deleted with its last member. A member whose group is no longer leased by
-- p_worker (rescued meanwhile) is not touched, as a single row is not.
DROP FUNCTION herald_complete_deliveries(text, uuid[], text[], text[], text[], text[]);
CREATE FUNCTION herald_complete_deliveries(p_worker text, p_ids uuid[], p_outcomes text[], p_errors text[],
                                           p_retry_at text[], p_tokens text[], p_groups uuid[] DEFAULT NULL,
                                           p_members integer[] DEFAULT NULL)
RETURNS TABLE (finished_count bigint, retried_count bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
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
BEGIN
    IF cardinality(v_groups) > 0 THEN
        SELECT coalesce(array_agg(x.id) FILTER (WHERE x.grp IS NULL), '{}') INTO v_singles
          FROM unnest(p_ids, p_groups) AS x (id, grp);

        WITH input AS (
            SELECT x.id, x.outcome, nullif(x.error, '') AS error, nullif(x.retry_at, '')::timestamptz AS retry_at,
                   nullif(x.token, '') AS token, x.grp, x.member
              FROM unnest(p_ids, p_outcomes, p_errors, p_retry_at, p_tokens, p_groups, p_members)
                   AS x (id, outcome, error, retry_at, token, grp, member)
             WHERE x.grp IS NOT NULL
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
        SELECT (SELECT coalesce(sum(h.deliveries), 0) FROM history h), (SELECT count(*) FROM split),
               coalesce((SELECT array_agg(g.id) FROM marked g WHERE g.emptied), '{}'),
               c.requests, c.created, c.sent, c.failed
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
            SELECT request_id, request_created_at,
                   count(*) FILTER (WHERE outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE outcome <> 'sent') AS failed
              FROM finished GROUP BY request_id, request_created_at
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
    -- deadlock.
    IF cardinality(v_c_requests) > 0 THEN
        WITH counts AS (
            SELECT c.request_id, c.request_created_at, sum(c.sent) AS sent, sum(c.failed) AS failed
              FROM unnest(v_c_requests, v_c_created, v_c_sent, v_c_failed) AS c (request_id, request_created_at, sent, failed)
             GROUP BY c.request_id, c.request_created_at
        ), locked AS (
            SELECT r.id, r.created_at FROM push_requests r JOIN counts c
                ON r.id = c.request_id AND r.created_at = c.request_created_at
             ORDER BY r.id FOR UPDATE OF r
        )
        UPDATE push_requests r SET sent = r.sent + c.sent, failed = r.failed + c.failed
          FROM counts c JOIN locked l ON l.id = c.request_id AND l.created_at = c.request_created_at
         WHERE r.id = c.request_id AND r.created_at = c.request_created_at;
    END IF;

    RETURN QUERY SELECT v_finished + v_member_finished, v_retried + v_member_retried;
END
$$;
