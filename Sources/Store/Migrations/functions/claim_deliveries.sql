-- The worker's claim: leases up to p_limit due deliveries of the given services to p_worker for
-- p_lease_seconds, in one scan of the due index, skipping rows other workers hold (SKIP LOCKED).
-- A group row's members are returned with their group. The partner's mini-app is read once per claimed
-- row, and each member costs one opt_outs_pkey probe. Each returned delivery carries its verdict: 'send',
-- or why not ('token_invalid', 'suppressed', 'superseded', 'cancelled', 'held', ...), which the worker records
-- without sending. A suspended partner's rows are not claimed at all.
-- The rows an intake's notification lists are leased by a statement of their own, by primary key
-- (Sources/Store/DeliveryStore.swift, claimListedSQL): it gives the same verdicts for a row without an activity.
CREATE OR REPLACE FUNCTION herald_claim_deliveries(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                        p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                        p_cursor_times timestamptz[], p_bulk_limit integer,
                                        p_user_max_per_hour integer DEFAULT 0)
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text, lane smallint, partner_id uuid,
               available_at timestamptz, bundle_id text,
               activity_event text, priority smallint, group_id uuid, member integer, held_until timestamptz,
               collapse_id text)
LANGUAGE plpgsql VOLATILE
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
    -- The host's guards across partners (functions/user_guards.sql): the claimed deliveries they stop, with why.
    v_guard_ids     uuid[] := '{}';
    v_guard_verdicts text[];
    v_guard_until   timestamptz[];
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
         WHERE p.visited
           -- A suspended partner's rows stay queued, untouched, until it is resumed (a revoked one's are claimed:
           -- to be cancelled). A scalar subquery, not NOT EXISTS: one partners_pkey probe per partner with due
           -- rows, where an anti-join may hash every active partner.
           AND coalesce((SELECT s.suspended_at IS NULL OR s.revoked_at IS NOT NULL FROM partners s WHERE s.id = p.id),
                        true);

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

    -- The host's guards across partners, once for the batch (p_user_max_per_hour: 0 is no cap).
    SELECT coalesce(array_agg(g.id), '{}'), array_agg(g.verdict), array_agg(g.held_until)
      INTO v_guard_ids, v_guard_verdicts, v_guard_until
      FROM herald_user_guards(v_claimed, p_user_max_per_hour) AS g;

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
               -- Nothing a revoked partner queued is sent, but for the ends that take its activities off the
               -- lock screens (functions/partner_revoke.sql).
               WHEN d.revoked AND d.activity_event IS DISTINCT FROM 'end' THEN 'cancelled'
               WHEN d.expires_at IS NOT NULL AND d.expires_at <= now() THEN 'expired'
               -- A push with a newer one of the same collapse id for the same device (functions/outbox_write.sql).
               WHEN d.superseded_by IS NOT NULL THEN 'superseded'
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
               -- The host's guards: 'held' for the user's quiet hours, or 'user_cap'.
               WHEN d.id = ANY (v_guard_ids) THEN v_guard_verdicts[array_position(v_guard_ids, d.id)]
               WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = d.user_id AND o.mini_app_id = d.mini_app_id)
                   THEN 'suppressed'
               ELSE 'send'
           END,
           d.lane, d.partner_id, d.available_at, v.bundle_id, d.activity_event::text, d.priority, d.group_id, d.member,
           v_guard_until[array_position(v_guard_ids, d.id)], d.collapse_id
      -- The claimed deliveries: single rows as they are (no function scan per row), a group's members
      -- not yet done unnested with the group's columns. The partner's mini-app (what an opt-out names) is
      -- looked up once per claimed row, before a group is unnested.
      FROM (SELECT s.id, s.user_id, s.device_id, s.payload, NULL::uuid AS group_id, NULL::integer AS member,
                   s.service, s.environment, s.attempts, s.expires_at, s.activity_id, s.activity_event, s.created_at,
                   s.partner_id, s.lane, s.available_at, s.priority, sp.mini_app_id,
                   sp.revoked_at IS NOT NULL AS revoked, s.collapse_id, s.superseded_by
              FROM deliveries s
              LEFT JOIN partners sp ON sp.id = s.partner_id
             WHERE s.ctid = ANY (v_claimed) AND s.members IS NULL
            UNION ALL
            SELECT m.id, m.user_id, m.device_id, m.payload, g.id, m.member::integer,
                   g.service, g.environment, g.attempts, g.expires_at, g.activity_id, g.activity_event, g.created_at,
                   g.partner_id, g.lane, g.available_at, g.priority, gp.mini_app_id,
                   gp.revoked_at IS NOT NULL AS revoked, NULL::text, NULL::uuid
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
