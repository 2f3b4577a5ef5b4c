-- Writes the staged batch: for each line whose (partner, key) is new, its key, its audit row in
-- push_requests (lane 1), its user_senders rows and its deliveries (by the outbox's one writer,
-- functions/outbox_write.sql), as the intake's enqueue does for one push (Queries.PushRequests.enqueue). The key
-- goes first: a line whose key another run holds (committed, or in flight: ON CONFLICT waits for it)
-- writes nothing else.
-- Returns one row per line: 'accepted', 'duplicate' (the key was used by an earlier run) or
-- 'duplicate_key' (used earlier in this run, at `first_line`).
CREATE OR REPLACE FUNCTION herald_backfill_apply(p_run uuid)
RETURNS TABLE (line integer, outcome text, first_line integer)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_accepted uuid[];
    v_written bigint;
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
                               send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing,
                               collapse_key)
    SELECT l.request_id, l.created_at, l.partner_id, l.mini_app_id, NULL, l.title, l.body, l.deep_link, l.data,
           l.send_at, l.ttl_seconds, herald_push_expiry(coalesce(l.send_at, l.created_at), l.ttl_seconds), 1,
           l.recipients, l.deliveries, l.suppressed, l.missing, l.collapse_key
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

    -- Each delivery with its line's request (the writer's p_of NULL): due at sendAt or at once, single rows, outside
    -- the host's guards, with its line's collapse id (functions/collapse_id.sql) when the line has a collapse key.
    SELECT count(*) INTO v_written
      FROM (SELECT array_agg(x.request_id) AS requests, array_agg(l.created_at) AS created,
                   array_agg(l.partner_id) AS partners, array_agg(coalesce(l.send_at, l.created_at)) AS due,
                   array_agg(l.ttl_seconds) AS ttl, array_agg(x.id) AS ids, array_agg(x.service) AS services,
                   array_agg(x.user_id) AS users, array_agg(x.device_id) AS devices,
                   array_agg(x.environment) AS environments, array_agg(x.payload) AS payloads,
                   CASE WHEN bool_or(l.collapse_key IS NOT NULL)
                        THEN array_agg(herald_collapse_id(l.mini_app_id, l.collapse_key)) END AS collapses
              FROM herald_backfill_deliveries x
              JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = x.request_id
              JOIN herald_backfill_lines l ON l.request_id = x.request_id) b
     CROSS JOIN LATERAL herald_outbox_write(1, b.requests, b.created, b.partners, b.due, b.ttl, NULL, NULL, b.ids,
                                            b.services, b.users, b.devices, b.environments, b.payloads,
                                            p_collapse => b.collapses) w;

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
