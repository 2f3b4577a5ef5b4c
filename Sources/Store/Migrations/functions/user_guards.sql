-- The host's guards for a user across partners, for one claimed batch (functions/claim_deliveries.sql calls it
-- once, with the row versions it leased): which claimed partner pushes (deliveries.interruption_level set) must not
-- go now, and why.
-- - 'held', until the end of the user's quiet hours (functions/quiet_hours_end.sql): a passive or active push while
--   its user is inside them. The worker defers it to that time with its attempt unspent. Time-sensitive pushes pass.
-- - 'user_cap': the rest of the batch's pushes, counted per user over a sliding hour (user_push_windows,
--   functions/user_window_admit.sql) when p_max > 0; one beyond p_max pushes is suppressed. Each user's window row
--   is upserted in user order within the claim's transaction: a second worker's claim for the same user waits for
--   the row lock and counts after the first, so together they never pass p_max.
-- Rows already past their TTL, of a revoked partner or of a user who opted out of the mini-app are left to the
-- claim's own verdicts and not counted. Every other row passes (no row returned). With the cap off and no user with quiet hours, nothing
-- is read but one probe of users_quiet_hours.
CREATE OR REPLACE FUNCTION herald_user_guards(p_rows tid[], p_max integer)
RETURNS TABLE (id uuid, verdict text, held_until timestamptz)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_quiet boolean := EXISTS (SELECT 1 FROM users u WHERE u.quiet_start IS NOT NULL);
BEGIN
    IF coalesce(p_max, 0) <= 0 AND NOT v_quiet THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH claimed AS MATERIALIZED (
        -- The batch's partner pushes, a group's members not yet done with the group's columns, in claim order.
        SELECT x.id, x.user_id, x.request_id, x.interruption_level AS level,
               row_number() OVER (ORDER BY x.available_at, x.request_id, x.member) AS o
          FROM (SELECT s.id, s.user_id, s.request_id, s.interruption_level, s.partner_id, s.expires_at,
                       s.available_at, 0::bigint AS member
                  FROM deliveries s
                 WHERE s.ctid = ANY (p_rows) AND s.members IS NULL AND s.interruption_level IS NOT NULL
                UNION ALL
                SELECT m.id, m.user_id, g.request_id, g.interruption_level, g.partner_id, g.expires_at,
                       g.available_at, m.member
                  FROM deliveries g
                 CROSS JOIN LATERAL unnest(g.members, g.member_users) WITH ORDINALITY AS m (id, user_id, member)
                 WHERE g.ctid = ANY (p_rows) AND g.members IS NOT NULL AND g.interruption_level IS NOT NULL
                   AND NOT m.member = ANY (coalesce(g.members_done, '{}'))) AS x
          LEFT JOIN partners p ON p.id = x.partner_id
         WHERE (x.expires_at IS NULL OR x.expires_at > now()) AND p.revoked_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM opt_outs oo WHERE oo.user_id = x.user_id AND oo.mini_app_id = p.mini_app_id)
    ), judged AS MATERIALIZED (
        SELECT c.id, c.user_id, c.request_id, c.o,
               CASE WHEN v_quiet AND c.level <> 'time-sensitive' THEN
                   (SELECT herald_quiet_hours_end(u.time_zone, u.quiet_start, u.quiet_end, now())
                      FROM users u WHERE u.id = c.user_id AND u.quiet_start IS NOT NULL)
               END AS held_until
          FROM claimed c
    ), counted AS (
        -- Users in id order: two claims lock the rows of the users they share in the same order.
        INSERT INTO user_push_windows AS w (user_id, requests, taken_at)
        SELECT f.user_id, a.requests, a.taken_at
          FROM (SELECT r.user_id, array_agg(r.request_id ORDER BY r.first) AS candidates
                  FROM (SELECT j.user_id, j.request_id, min(j.o) AS first FROM judged j
                         WHERE j.held_until IS NULL
                         GROUP BY j.user_id, j.request_id) AS r
                 GROUP BY r.user_id) AS f
         CROSS JOIN LATERAL herald_user_window_admit('{}', '{}', f.candidates, p_max, now()) AS a
         WHERE p_max > 0
         ORDER BY f.user_id
        -- The inserted row's requests are the first p_max candidates: enough to fill what the stored window lacks.
        ON CONFLICT (user_id) DO UPDATE
           SET (requests, taken_at) = (SELECT a.requests, a.taken_at
                                         FROM herald_user_window_admit(w.requests, w.taken_at, EXCLUDED.requests,
                                                                       p_max, now()) AS a)
        RETURNING w.user_id, w.requests
    )
    SELECT j.id, CASE WHEN j.held_until IS NOT NULL THEN 'held' ELSE 'user_cap' END, j.held_until
      FROM judged j
      LEFT JOIN counted c ON c.user_id = j.user_id
     WHERE j.held_until IS NOT NULL
        OR (p_max > 0 AND NOT j.request_id = ANY (coalesce(c.requests, '{}')));
END
$$;
