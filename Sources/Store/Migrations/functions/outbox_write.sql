-- The one writer of push deliveries: every path that puts a push in the outbox calls it (the intake's batch,
-- functions/intake_push.sql; the push of more devices than the intake's slots, the named query
-- Queries.PushRequests.enqueue in Queries/push_requests.sql; a reminder, functions/schedule_reminder.sql;
-- heraldctl backfill, functions/backfill_apply.sql; heraldctl replay, the batch query of Queries/replay.sql).
-- Live Activity rows have their own writer, functions/activity_event.sql.
--
-- The rows come as arrays: per request (its id, creation, partner, when its deliveries are due, TTL and interruption
-- level) and per delivery (p_of: the position of its request in those arrays, NULL when delivery k is request k's;
-- its id, service, user, device, environment and payload, rendered and signed before). A delivery is due at its
-- request's p_due and expires its TTL after (functions/push_expiry.sql).
--   p_only: the requests (by position) whose deliveries are written; NULL, every one.
--   p_group_from: a request's deliveries to one (service, environment) are written as group rows of at most 50, of
--     even sizes, when they are at least this many (sql/016_delivery_groups.sql); NULL, always single rows.
--   p_lease, p_lease_seconds, p_leased: the rows of the requests p_leased marks go in leased to worker p_lease for
--     p_lease_seconds, attempted once, as a claim would leave them (the intake's write, functions/intake_push.sql);
--     NULL, pending.
--   p_collapse: a request's collapse id (functions/collapse_id.sql); NULL, none.
--   p_priority: a request's apns-priority, 5 for a silent retract message (functions/push_retract.sql), which the
--     worker sends as a background push; NULL, an alert.
-- An id already in the outbox is skipped (only a replay's can be: it queues a finished delivery under its own id).
-- Returns the rows written: a group row's id for its members. Estimated at one row (ROWS 1), not the planner's
-- default of 1,000 for a set-returning function: a replay joins them to history by primary key, which a larger
-- estimate has it scan whole instead (OperationsQueryPlanTests).
CREATE OR REPLACE FUNCTION herald_outbox_write(
    p_lane integer,
    p_request uuid[], p_created timestamptz[], p_partner uuid[], p_due timestamptz[], p_ttl integer[],
    p_interruption text[],
    p_of integer[], p_id uuid[], p_service text[], p_user text[], p_device text[], p_environment text[],
    p_payload text[],
    p_only integer[] DEFAULT NULL, p_group_from integer DEFAULT NULL,
    p_lease text DEFAULT NULL, p_lease_seconds integer DEFAULT NULL, p_leased boolean[] DEFAULT NULL,
    p_collapse text[] DEFAULT NULL, p_priority smallint[] DEFAULT NULL)
RETURNS TABLE (r_id uuid, r_request uuid, r_request_created timestamptz)
LANGUAGE plpgsql
ROWS 1
AS $$
DECLARE
    -- A group row's members (array literals, cast back in the insert), one element per row; NULL: single rows.
    m_count integer[];
    m_ids text[];
    m_users text[];
    m_devices text[];
    m_payloads text[];
BEGIN
    -- Grouping first, and only when asked: the rows become group rows and single rows, in the same arrays. Its sort,
    -- window and ordered aggregates would cost every call (the intake's among them) a sizeable part of it to start.
    IF p_group_from IS NOT NULL THEN
        SELECT array_agg(r.a), array_agg(r.id), array_agg(r.service), array_agg(r.user_id), array_agg(r.device_id),
               array_agg(r.environment), array_agg(r.payload), array_agg(r.n), array_agg(r.ids), array_agg(r.users),
               array_agg(r.devices), array_agg(r.payloads)
          INTO p_of, p_id, p_service, p_user, p_device, p_environment, p_payload, m_count, m_ids, m_users,
               m_devices, m_payloads
          FROM (SELECT g.a, CASE WHEN count(*) = 1 THEN (array_agg(g.id))[1] ELSE herald_uuid_v7() END AS id,
                       g.service, CASE WHEN count(*) = 1 THEN (array_agg(g.user_id))[1] ELSE '' END AS user_id,
                       CASE WHEN count(*) = 1 THEN (array_agg(g.device_id))[1] ELSE '' END AS device_id,
                       g.environment, CASE WHEN count(*) = 1 THEN (array_agg(g.payload))[1] ELSE '' END AS payload,
                       count(*)::integer AS n,
                       CASE WHEN count(*) > 1 THEN array_agg(g.id ORDER BY g.o)::text END AS ids,
                       CASE WHEN count(*) > 1 THEN array_agg(g.user_id ORDER BY g.o)::text END AS users,
                       CASE WHEN count(*) > 1 THEN array_agg(g.device_id ORDER BY g.o)::text END AS devices,
                       CASE WHEN count(*) > 1 THEN array_agg(g.payload ORDER BY g.o)::text END AS payloads
                  FROM (SELECT x.*, coalesce(p_of[x.o], x.o::integer) AS a,
                               CASE WHEN count(*) OVER s < p_group_from
                                         OR p_collapse[coalesce(p_of[x.o], x.o::integer)] IS NOT NULL THEN -x.o
                                    ELSE (row_number() OVER (s ORDER BY x.o) - 1)
                                         * ceil(count(*) OVER s / 50.0)::bigint / count(*) OVER s END AS chunk
                          FROM unnest(p_id, p_service, p_user, p_device, p_environment, p_payload)
                               WITH ORDINALITY AS x (id, service, user_id, device_id, environment, payload, o)
                         WHERE p_only IS NULL OR coalesce(p_of[x.o], x.o::integer) = ANY (p_only)
                        WINDOW s AS (PARTITION BY coalesce(p_of[x.o], x.o::integer), x.service, x.environment)) g
                 GROUP BY g.a, g.service, g.environment, g.chunk) r;
        p_only := NULL;
    END IF;
    RETURN QUERY
    WITH written AS (
        INSERT INTO deliveries AS d (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
            environment, payload, available_at, expires_at, state, leased_by, attempts, lease_expires_at, member_count,
            members, member_users, member_devices, member_payloads, interruption_level, collapse_id, priority)
        SELECT x.id, p_request[x.a], p_created[x.a], p_partner[x.a], p_lane, x.service, x.user_id, x.device_id,
               x.environment, x.payload, p_due[x.a], herald_push_expiry(p_due[x.a], p_ttl[x.a]),
               CASE WHEN x.leased THEN 'leased' ELSE 'pending' END, CASE WHEN x.leased THEN p_lease END,
               CASE WHEN x.leased THEN 1 ELSE 0 END,
               CASE WHEN x.leased THEN now() + make_interval(secs => p_lease_seconds) END,
               coalesce(m_count[x.o], 1), m_ids[x.o]::uuid[], m_users[x.o]::text[], m_devices[x.o]::text[],
               m_payloads[x.o]::text[], p_interruption[x.a], p_collapse[x.a], p_priority[x.a]
          FROM (SELECT u.*, p_lease IS NOT NULL AND coalesce(p_leased[u.a], false) AS leased
                  FROM (SELECT y.*, coalesce(p_of[y.o], y.o::integer) AS a
                          FROM unnest(p_id, p_service, p_user, p_device, p_environment, p_payload)
                               WITH ORDINALITY AS y (id, service, user_id, device_id, environment, payload, o)) u
                 WHERE p_only IS NULL OR u.a = ANY (p_only)) x
        ON CONFLICT (id) DO NOTHING
        RETURNING d.id, d.request_id, d.request_created_at
    )
    SELECT w.id, w.request_id, w.request_created_at FROM written w;
    -- A statement of its own, after the insert: it sees the rows just written, so of two requests of one call with
    -- the same collapse id the later in the call supersedes the earlier too (a backfill's requests share one time,
    -- and their ids' random bits would order them by chance); a request of an earlier call, the one created first.
    IF p_collapse IS NOT NULL THEN
        UPDATE deliveries o
           SET superseded_by = n.id,
               available_at = CASE WHEN o.state = 'pending' THEN least(o.available_at, now()) ELSE o.available_at END
          FROM (SELECT y.id, y.device_id, y.a, p_collapse[y.a] AS collapse_id, p_created[y.a] AS created,
                       p_request[y.a] AS request
                  FROM (SELECT z.*, coalesce(p_of[z.o], z.o::integer) AS a
                          FROM unnest(p_id, p_device) WITH ORDINALITY AS z (id, device_id, o)) y
                 WHERE p_collapse[y.a] IS NOT NULL AND (p_only IS NULL OR y.a = ANY (p_only))) n
         WHERE o.collapse_id = n.collapse_id AND o.device_id = n.device_id AND o.superseded_by IS NULL
           AND CASE WHEN o.request_id = ANY (p_request) THEN array_position(p_request, o.request_id) < n.a
                    ELSE (o.request_created_at, o.request_id) < (n.created, n.request) END;
    END IF;
END
$$;
