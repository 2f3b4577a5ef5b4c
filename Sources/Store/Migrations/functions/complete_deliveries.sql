-- The worker's batched completion: records the outcomes of many deliveries in one statement. Only rows
-- still leased by p_worker change (one rescued meanwhile belongs to its new sender); finished rows move
-- to history and their requests' counts (sent, suppressed, superseded, and every other final outcome as failed:
-- sql/052_user_guards_visible.sql) are updated once per request; a retry goes back to the outbox
-- at its time; a dead token's row records its reason and the verdict's time (in p_retry_at, otherwise
-- empty for a finished row), and spares a device registered after that time. A Live Activity row's outcome
-- is added to its audit event (sql/033_live_activity_events.sql): an event is an activity's request.
CREATE OR REPLACE FUNCTION herald_complete_deliveries(p_worker text, p_ids uuid[], p_outcomes text[], p_errors text[],
                                           p_retry_at text[], p_tokens text[], p_groups uuid[] DEFAULT NULL,
                                           p_members integer[] DEFAULT NULL)
RETURNS TABLE (finished_count bigint, retried_count bigint)
LANGUAGE plpgsql VOLATILE
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
    -- Per request: what this batch adds to its sent, failed, suppressed and superseded counts (rolled up once, at the
    -- end).
    v_c_requests uuid[] := '{}';
    v_c_created  timestamptz[] := '{}';
    v_c_sent     bigint[] := '{}';
    v_c_failed   bigint[] := '{}';
    v_c_suppressed bigint[] := '{}';
    v_c_superseded bigint[] := '{}';
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
                   c.requests, c.created, c.sent, c.none, c.none, c.none
              INTO v_deleted, v_member_finished, v_c_requests, v_c_created, v_c_sent, v_c_failed, v_c_suppressed,
                   v_c_superseded
              FROM (SELECT coalesce(array_agg(request_id), '{}') AS requests,
                           coalesce(array_agg(request_created_at), '{}') AS created,
                           coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(0::bigint), '{}') AS none
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
                      g.attempts, g.created_at, g.expires_at, g.interruption_level, g.member_users, g.member_devices,
                      g.member_payloads, cardinality(g.members_done) >= cardinality(g.members) AS emptied
        ), group_members AS MATERIALIZED (
            -- The arrays unnested once per group, apart from the join below (whose estimates would
            -- otherwise run the unnest, and detoast the arrays, once per finished member); payloads
            -- only when some member may need its bytes (a failure replay may send, a retry).
            SELECT g.id AS grp, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.environment,
                   g.attempts, g.created_at, g.expires_at, g.interruption_level, m.user_id, m.device_id, m.payload,
                   m.member
              FROM marked g
             CROSS JOIN LATERAL unnest(g.member_users, g.member_devices,
                                       CASE WHEN NOT v_all_sent THEN g.member_payloads END)
                   WITH ORDINALITY AS m (user_id, device_id, payload, member)
        ), finished_members AS (
            SELECT i.id, g.grp, g.request_id, g.request_created_at, g.partner_id, g.lane, g.service, g.environment,
                   g.attempts, g.created_at, g.expires_at, g.interruption_level, g.user_id, g.device_id, g.payload,
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
            -- A deferred member was held back by Herald's own setup fault or its user's quiet hours: the claim's
            -- attempt is given back. The group's interruption level goes along: the host's guards read it.
            INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                                    environment, payload, attempts, available_at, expires_at, last_error, created_at,
                                    interruption_level)
            SELECT f.id, f.request_id, f.request_created_at, f.partner_id, f.lane, f.service, f.user_id, f.device_id,
                   f.environment, f.payload,
                   CASE WHEN f.outcome = 'deferred' THEN greatest(f.attempts - 1, 0) ELSE f.attempts END,
                   f.retry_at, f.expires_at, f.error, f.created_at, f.interruption_level
              FROM finished_members f
             WHERE f.outcome IN ('retry', 'deferred')
            RETURNING 1
        ), counts AS (
            SELECT f.request_id, f.request_created_at,
                   count(*) FILTER (WHERE f.outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE f.outcome NOT IN ('sent', 'suppressed', 'superseded')) AS failed,
                   count(*) FILTER (WHERE f.outcome = 'suppressed') AS suppressed,
                   count(*) FILTER (WHERE f.outcome = 'superseded') AS superseded
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
               v_c_requests || c.requests, v_c_created || c.created, v_c_sent || c.sent, v_c_failed || c.failed,
               v_c_suppressed || c.suppressed, v_c_superseded || c.superseded
          INTO v_member_finished, v_member_retried, v_emptied, v_c_requests, v_c_created, v_c_sent, v_c_failed,
               v_c_suppressed, v_c_superseded
          FROM (SELECT coalesce(array_agg(request_id), '{}') AS requests, coalesce(array_agg(request_created_at), '{}') AS created,
                       coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(failed), '{}') AS failed,
                       coalesce(array_agg(suppressed), '{}') AS suppressed,
                       coalesce(array_agg(superseded), '{}') AS superseded
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
                      d.collapse_id,
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
                                          request_created_at, payload, collapse_id)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts, error,
                   created_at, now(), activity_event, request_created_at, payload, collapse_id
              FROM finished
        ), counts AS (
            -- A Live Activity's rows carry the activity's id: there is no request to count them in.
            SELECT request_id, request_created_at,
                   count(*) FILTER (WHERE outcome = 'sent') AS sent,
                   count(*) FILTER (WHERE outcome NOT IN ('sent', 'suppressed', 'superseded')) AS failed,
                   count(*) FILTER (WHERE outcome = 'suppressed') AS suppressed,
                   count(*) FILTER (WHERE outcome = 'superseded') AS superseded
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
               v_c_suppressed || c.suppressed, v_c_superseded || c.superseded, e.events, e.sent, e.failed,
               e.superseded
          INTO v_finished, v_follow_ups, v_c_requests, v_c_created, v_c_sent, v_c_failed, v_c_suppressed,
               v_c_superseded, v_e_events, v_e_sent, v_e_failed, v_e_superseded
          FROM (SELECT coalesce(array_agg(activity_event_id), '{}') AS events, array_agg(sent) AS sent,
                       array_agg(failed) AS failed, array_agg(superseded) AS superseded
                  FROM event_counts) e,
               (SELECT coalesce(array_agg(request_id), '{}') AS requests, coalesce(array_agg(request_created_at), '{}') AS created,
                       coalesce(array_agg(sent), '{}') AS sent, coalesce(array_agg(failed), '{}') AS failed,
                       coalesce(array_agg(suppressed), '{}') AS suppressed,
                       coalesce(array_agg(superseded), '{}') AS superseded
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
            SELECT c.request_id, c.request_created_at, sum(c.sent) AS sent, sum(c.failed) AS failed,
                   sum(c.suppressed) AS suppressed, sum(c.superseded) AS superseded
              FROM unnest(v_c_requests, v_c_created, v_c_sent, v_c_failed, v_c_suppressed, v_c_superseded)
                   AS c (request_id, request_created_at, sent, failed, suppressed, superseded)
             GROUP BY c.request_id, c.request_created_at
             ORDER BY c.request_id
        ), locked AS (
            SELECT r.id, r.created_at, c.sent, c.failed, c.suppressed, c.superseded
              FROM counts c
             CROSS JOIN LATERAL (SELECT p.id, p.created_at FROM push_requests p
                                  WHERE p.id = c.request_id AND p.created_at = c.request_created_at
                                    FOR UPDATE) r
        )
        UPDATE push_requests r
           SET sent = r.sent + l.sent, failed = r.failed + l.failed,
               suppressed_deliveries = r.suppressed_deliveries + l.suppressed, superseded = r.superseded + l.superseded
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
