-- Writes the staged batch: for each line whose (partner, key) is new, its key, its audit row in
-- push_requests (lane 1), its user_senders rows and its deliveries, as the intake's enqueue does
-- for one push (PushStore.enqueueSQL). The key goes first: a line whose key another run holds
-- (committed, or in flight: ON CONFLICT waits for it) writes nothing else.
-- Returns one row per line: 'accepted', 'duplicate' (the key was used by an earlier run) or
-- 'duplicate_key' (used earlier in this run, at `first_line`).
CREATE OR REPLACE FUNCTION herald_backfill_apply(p_run uuid)
RETURNS TABLE (line integer, outcome text, first_line integer)
LANGUAGE plpgsql VOLATILE
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
