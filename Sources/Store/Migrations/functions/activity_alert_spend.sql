-- The alerted-push budget of one activity (HERALD_LA_ALERTED_UPDATES_PER_HOUR): given the times of its
-- priority-10 pushes (`alerted_at`), returns them trimmed to the last hour with `p_now` added when fewer
-- than `p_limit` remain, or NULL when the hour's budget is spent (the push then goes at priority 5).
-- The caller holds the activity's row lock and stores what this returns.
CREATE OR REPLACE FUNCTION herald_activity_alert_spend(p_alerted timestamptz[], p_now timestamptz, p_limit integer)
RETURNS timestamptz[]
LANGUAGE sql STABLE
AS $$
    SELECT CASE WHEN cardinality(w.kept) < p_limit THEN w.kept || p_now END
      FROM (SELECT coalesce(array_agg(t ORDER BY t), '{}') AS kept
              FROM unnest(p_alerted) AS t
             WHERE t > p_now - interval '1 hour') w
$$;
