-- Operations: what `heraldctl replay` and `heraldctl stats` read and write.
--
-- Replay sends a failed delivery again with the bytes it had (rendered and signed at intake; the worker
-- has no signing key), under its own id, so the app sees the same notification and the history keeps
-- one story per id. History keeps those bytes only for rows a replay may pick: failed, dead and
-- expired pushes (never sent rows, nor Live Activity rows, whose state a newer update replaced).
ALTER TABLE delivery_history
    -- The request's partition key, so a replay finds (and counts again on) its audit row by primary key.
    ADD COLUMN request_created_at timestamptz,
    ADD COLUMN payload text,
    -- Set when a replay queued this row again: a second replay skips it (already_replayed).
    ADD COLUMN replayed_at timestamptz;

-- Replay selects by partner and finish time, or by finish time alone (and by request, with
-- delivery_history_request). Partial: only replayable rows pay for these entries, not the sent ones that
-- every completion writes.
CREATE INDEX delivery_history_replayable_partner ON delivery_history (partner_id, finished_at)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;
CREATE INDEX delivery_history_replayable ON delivery_history (finished_at)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;
-- `heraldctl stats` counts the last hour's outcomes. History is written in finish order, so a BRIN
-- index (a few pages per partition) narrows the scan to the recent block ranges at almost no write cost.
CREATE INDEX delivery_history_finished ON delivery_history USING brin (finished_at) WITH (pages_per_range = 32);

-- As in 009_live_activities.sql; history also keeps the request's creation time and, for a row a
-- replay may send again, its payload.
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
                      -- Only what `heraldctl replay` may send again keeps its bytes: sent rows (nearly all)
                      -- and Live Activity rows stay small.
                      CASE WHEN d.activity_id IS NULL AND v_meta -> (d.id::text) ->> 0 IN ('failed', 'dead', 'expired')
                           THEN d.payload END AS payload,
                      v_meta -> (d.id::text) ->> 0 AS outcome, v_meta -> (d.id::text) ->> 1 AS error,
                      v_meta -> (d.id::text) ->> 3 AS token
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
