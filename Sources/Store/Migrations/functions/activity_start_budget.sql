-- The start budgets the host's mini-apps share (HeraldCore/LiveActivityBudgets.swift) for a start of `p_user` with
-- `p_mini_app` at `p_now`. The caller holds the user's advisory lock, so each start counts the ones committed before
-- it: a start at the partner's call (functions/activity_start.sql) and a scheduled start when it comes due
-- (functions/activity_start_due.sql).
--
-- `reason` is NULL when the start may go; else 'active_per_user' (the user has `p_max_active` active activities of
-- other mini-apps: the one a start replaces is not counted twice), 'starts_per_user' or 'starts_per_user_app' (the
-- hour's starts, replacements included, are spent; `retry_after` is the seconds until the start that must leave the
-- window does). A scheduled start counts from when it is sent, as an activity that started: never while it waits.
CREATE OR REPLACE FUNCTION herald_activity_start_budget(
    p_user text, p_mini_app text, p_now timestamptz, p_max_active integer, p_starts_per_user integer,
    p_starts_per_app integer, OUT reason text, OUT retry_after integer)
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_active      integer;
    v_user_starts timestamptz[];
    v_app_starts  timestamptz[];
    v_user_wait   integer := 0;
    v_app_wait    integer := 0;
BEGIN
    -- Active activities of the user's other mini-apps (live_activities_one_active); one past its TTL that the sweep
    -- has not ended yet no longer counts.
    SELECT count(*) INTO v_active
      FROM live_activities a
     WHERE a.user_id = p_user AND a.status = 'active' AND a.mini_app_id <> p_mini_app AND a.expires_at > p_now;
    IF v_active >= p_max_active THEN
        reason := 'active_per_user';
        RETURN;
    END IF;

    -- The user's starts of the last hour, oldest first (live_activities_user_starts). A scheduled start's
    -- `created_at` is its planned start until it is sent; one never sent was no start.
    SELECT coalesce(array_agg(a.created_at ORDER BY a.created_at), '{}'),
           coalesce(array_agg(a.created_at ORDER BY a.created_at) FILTER (WHERE a.mini_app_id = p_mini_app), '{}')
      INTO v_user_starts, v_app_starts
      FROM live_activities a
     WHERE a.user_id = p_user AND a.created_at > p_now - interval '1 hour'
       AND a.status NOT IN ('scheduled', 'cancelled', 'refused');
    -- Over a limit, the count falls below it once its (count - limit + 1)-th oldest start leaves the window (the
    -- oldest, unless the limit was lowered since).
    IF cardinality(v_user_starts) >= p_starts_per_user THEN
        v_user_wait := greatest(1, ceil(extract(epoch FROM
            v_user_starts[cardinality(v_user_starts) - p_starts_per_user + 1] + interval '1 hour' - p_now))::integer);
    END IF;
    IF cardinality(v_app_starts) >= p_starts_per_app THEN
        v_app_wait := greatest(1, ceil(extract(epoch FROM
            v_app_starts[cardinality(v_app_starts) - p_starts_per_app + 1] + interval '1 hour' - p_now))::integer);
    END IF;
    IF v_user_wait > 0 OR v_app_wait > 0 THEN
        reason := CASE WHEN v_app_wait >= v_user_wait THEN 'starts_per_user_app' ELSE 'starts_per_user' END;
        retry_after := greatest(v_user_wait, v_app_wait);
    END IF;
END
$$;
