-- What each delivery costs Postgres in a drain.
--
-- The claim found its rows three times: by the due index (to lock them), then by id through deliveries_pkey
-- twice (to mark them leased, then to return them with their devices). It now carries the locked row
-- versions (ctid) from one step to the next: a TID scan reads the page where a primary-key probe descends
-- the whole index, per row and per step.
--
-- History: a sent row (nearly all of them) wrote three index entries that nothing reads: the primary key
-- (id, finished_at), which no statement looks up and whose uniqueness the completion already gives (a
-- delivery leaves the outbox once per send), and delivery_history_request, which only replay reads, and only
-- for replayable rows. The key goes; the request index keeps only what replay may pick, like the other two
-- replay indexes of sql/010_operations.sql.
ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_pkey;
DROP INDEX delivery_history_request;
CREATE INDEX delivery_history_request ON delivery_history (request_id)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;

-- As in 012_claim_bulk_limit.sql, with row versions carried between the steps.
CREATE OR REPLACE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                        p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                        p_cursor_times timestamptz[], p_bulk_limit integer)
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
    -- Row versions (ctid), not ids: the rows are locked by this transaction, so a version found here
    -- is the one to update, and the one updated is the one to return; a TID scan reads its page
    -- directly where an id costs a descent of deliveries_pkey.
    v_locked   tid[];
    v_claimed  tid[] := '{}';
    v_round    tid[];
    v_round_partners uuid[];
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

        -- Rounds: every partner still in the running gets an equal share of what is left.
        WHILE cardinality(v_partners) > 0 AND v_taken < v_lane_limit LOOP
            v_quota := ceil((v_lane_limit - v_taken)::numeric / cardinality(v_partners))::integer;
            SELECT coalesce(array_agg(x.tid), '{}')
              INTO v_locked
              FROM (SELECT y.tid
                      FROM unnest(v_partners, v_floors) AS pp (partner_id, floor),
                           LATERAL (SELECT d.ctid AS tid FROM deliveries d
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
                     LIMIT v_lane_limit - v_taken) x;
            EXIT WHEN cardinality(v_locked) = 0;
            -- A statement of its own: its snapshot sees every version the lock above took (one a
            -- rescuer committed a moment ago included).
            WITH leased AS (
                UPDATE deliveries d
                   SET state = 'leased', leased_by = p_worker, attempts = d.attempts + 1,
                       lease_expires_at = now() + make_interval(secs => p_lease_seconds)
                 WHERE d.ctid = ANY (v_locked)
                RETURNING d.ctid AS tid, d.partner_id)
            SELECT coalesce(array_agg(l.tid), '{}'), coalesce(array_agg(l.partner_id), '{}')
              INTO v_round, v_round_partners
              FROM leased l;
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
     WHERE d.ctid = ANY (v_claimed);
END
$$;
