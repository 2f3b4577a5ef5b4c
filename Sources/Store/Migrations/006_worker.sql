-- The worker's queue functions: fair claim, queue heads, and the index they share.

-- Claims read due rows per (lane, partner), oldest first. The (lane, available_at) index of 004 is
-- replaced: with partner_id in the middle one index serves the fair claim (a range per partner),
-- the loose index scan that lists partners with pending work, and the head of each partner's
-- queue (its first entry) for the oldest-due metric and the next wake-up.
CREATE INDEX deliveries_due_partner ON deliveries (lane, partner_id, available_at) WHERE state = 'pending';
DROP INDEX deliveries_due;

-- The head of every (lane, partner) queue: its oldest pending row. A loose index scan (Postgres
-- has no skip scan): one index probe per partner, however many rows are pending.
CREATE FUNCTION herald_queue_heads()
RETURNS TABLE (lane smallint, partner_id uuid, oldest_available_at timestamptz)
LANGUAGE sql STABLE
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

-- Claims up to p_limit due deliveries for p_worker, leased for p_lease_seconds.
--
-- Fairness: the realtime lane (0) is served before the bulk lane (1); inside a lane the batch is
-- shared equally between the partners with due work, and what one partner cannot use goes to the
-- others (further rounds). A partner with a million queued rows therefore takes at most its share
-- of each batch, and another partner's new push is claimed by the next batch.
--
-- Each round locks with FOR UPDATE SKIP LOCKED (concurrent workers take disjoint rows) and marks
-- its rows leased at once, so later rounds of the same call do not see them again.
--
-- Returned per row: what the worker needs to send it, the device's current token (read now, so a
-- token the host replaced after enqueue is the one used), and a verdict: 'send', or why it must not
-- be sent: 'expired' (past its TTL), 'token_invalid' (the token was declared dead since),
-- 'device_removed', 'suppressed' (the user opted out of the mini-app after enqueue).
CREATE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[])
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_lane     smallint;
    v_partners uuid[];
    v_full     uuid[];
    v_quota    integer;
    v_taken    integer := 0;
    v_claimed  uuid[] := '{}';
    v_round    uuid[];
BEGIN
    FOREACH v_lane IN ARRAY ARRAY[0, 1]::smallint[] LOOP
        EXIT WHEN v_taken >= p_limit;
        -- Partners with pending rows in this lane (loose index scan on deliveries_due_partner).
        WITH RECURSIVE p AS (
            (SELECT d.partner_id FROM deliveries d
              WHERE d.state = 'pending' AND d.lane = v_lane ORDER BY d.partner_id LIMIT 1)
            UNION ALL
            SELECT (SELECT d.partner_id FROM deliveries d
                     WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id > p.partner_id
                     ORDER BY d.partner_id LIMIT 1)
              FROM p WHERE p.partner_id IS NOT NULL
        )
        SELECT coalesce(array_agg(p.partner_id), '{}') INTO v_partners FROM p WHERE p.partner_id IS NOT NULL;

        -- Rounds: every partner still in the running gets an equal share of what is left.
        WHILE cardinality(v_partners) > 0 AND v_taken < p_limit LOOP
            v_quota := ceil((p_limit - v_taken)::numeric / cardinality(v_partners))::integer;
            WITH picked AS MATERIALIZED (
                SELECT x.id, x.partner_id
                  FROM unnest(v_partners) AS pp (partner_id),
                       LATERAL (SELECT d.id, d.partner_id FROM deliveries d
                                 WHERE d.state = 'pending' AND d.lane = v_lane AND d.partner_id = pp.partner_id
                                   AND d.available_at <= now() AND d.service = ANY (p_services)
                                 ORDER BY d.available_at
                                 LIMIT v_quota
                                   FOR UPDATE SKIP LOCKED) x
                 LIMIT p_limit - v_taken
            ), leased AS (
                UPDATE deliveries d
                   SET state = 'leased', leased_by = p_worker, attempts = d.attempts + 1,
                       lease_expires_at = now() + make_interval(secs => p_lease_seconds)
                  FROM picked WHERE d.id = picked.id
                RETURNING d.id
            )
            SELECT coalesce(array_agg(leased.id), '{}'),
                   -- Partners that filled their share may have more: they stay for the next round.
                   coalesce((SELECT array_agg(c.partner_id) FROM (SELECT picked.partner_id FROM picked
                              GROUP BY picked.partner_id HAVING count(*) >= v_quota) c), '{}')
              INTO v_round, v_full
              FROM leased;
            EXIT WHEN cardinality(v_round) = 0;
            v_claimed := v_claimed || v_round;
            v_taken := v_taken + cardinality(v_round);
            v_partners := v_full;
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
           END
      FROM deliveries d
      LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
     WHERE d.id = ANY (v_claimed);
END
$$;
