-- The claim returns the device's bundle id (the APNs topic when the host registered one, see
-- APNsUpstream), and the completion knows a 'deferred' outcome: a row held back because the upstream
-- refused Herald's own credentials or configuration goes back to pending without spending
-- the attempt its claim counted.

DROP FUNCTION herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[]);

CREATE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                        p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                        p_cursor_times timestamptz[])
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text, lane smallint, partner_id uuid,
               available_at timestamptz, bundle_id text)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
-- Never JIT: the generic plan's cost grows with the table (a 10M-row backlog estimates ~800k), which
-- made Postgres JIT-compile the claim on every call (~140 ms for a 5 ms query).
SET jit = off
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
           CASE d.service WHEN 'apns' THEN v.apns_token ELSE v.fcm_token END,
           CASE
               WHEN d.expires_at IS NOT NULL AND d.expires_at <= now() THEN 'expired'
               WHEN v.device_id IS NULL THEN 'device_removed'
               WHEN d.service = 'apns' AND (v.apns_token IS NULL OR v.apns_token_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN d.service = 'fcm' AND (v.fcm_token IS NULL OR v.fcm_token_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN EXISTS (SELECT 1 FROM opt_outs o JOIN partners p ON p.mini_app_id = o.mini_app_id
                             WHERE p.id = d.partner_id AND o.user_id = d.user_id) THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id
      FROM deliveries d
      LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
     WHERE d.id = ANY (v_claimed);
END
$$;

-- As in 006_worker.sql, plus 'deferred': pending again at its time, the claim's attempt given back.
DROP FUNCTION herald_complete_deliveries(text, uuid[], text[], text[], text[], text[]);

CREATE FUNCTION herald_complete_deliveries(p_worker text, p_ids uuid[], p_outcomes text[], p_errors text[],
                                           p_retry_at text[], p_tokens text[])
RETURNS TABLE (finished_count bigint, retried_count bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
-- Never JIT: the generic plan's cost grows with the table (a 10M-row backlog estimates ~800k), which
-- made Postgres JIT-compile the claim on every call (~140 ms for a 5 ms query).
SET jit = off
AS $$
DECLARE
    v_final    uuid[];
    v_retry    uuid[];
    -- id -> [outcome, error, retry_at, token]
    v_meta     jsonb;
    v_finished bigint := 0;
    v_retried  bigint := 0;
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
                      d.device_id, d.attempts, d.created_at,
                      v_meta -> (d.id::text) ->> 0 AS outcome, v_meta -> (d.id::text) ->> 1 AS error,
                      v_meta -> (d.id::text) ->> 3 AS token
        ), history AS (
            INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                          attempts, last_error, created_at, finished_at)
            SELECT id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts, error,
                   created_at, now()
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
            UPDATE devices v
               SET apns_token_invalidated_at = CASE WHEN f.service = 'apns' THEN now()
                                                    ELSE v.apns_token_invalidated_at END,
                   fcm_token_invalidated_at = CASE WHEN f.service = 'fcm' THEN now()
                                                   ELSE v.fcm_token_invalidated_at END,
                   updated_at = now()
              FROM finished f
             WHERE f.outcome = 'token_invalid' AND f.token IS NOT NULL
               AND v.user_id = f.user_id AND v.device_id = f.device_id
               AND f.token = CASE f.service WHEN 'apns' THEN v.apns_token ELSE v.fcm_token END
        )
        SELECT count(*) INTO v_finished FROM finished;
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
