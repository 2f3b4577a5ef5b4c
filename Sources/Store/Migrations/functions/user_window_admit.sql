-- One user's window of counted partner pushes (user_push_windows, sql/051_user_guards.sql) after admitting
-- p_candidates, requests in the order they were claimed: entries older than an hour before p_now leave it;
-- a candidate already in it passes without counting again (another device of the same push, a retry); new
-- ones are added, taken at p_now, while the window holds fewer than p_max. A request is let through exactly
-- when it is in the result.
CREATE OR REPLACE FUNCTION herald_user_window_admit(p_requests uuid[], p_taken_at timestamptz[], p_candidates uuid[],
                                                    p_max integer, p_now timestamptz)
RETURNS TABLE (requests uuid[], taken_at timestamptz[])
LANGUAGE sql STABLE
AS $$
    WITH kept AS (
        SELECT k.r, k.t, k.o FROM unnest(p_requests, p_taken_at) WITH ORDINALITY AS k (r, t, o)
         WHERE k.t > p_now - interval '1 hour'
    ), added AS (
        SELECT c.r, c.o FROM unnest(p_candidates) WITH ORDINALITY AS c (r, o)
         WHERE NOT EXISTS (SELECT 1 FROM kept WHERE kept.r = c.r)
         ORDER BY c.o
         LIMIT greatest(p_max - (SELECT count(*) FROM kept), 0)
    )
    SELECT coalesce((SELECT array_agg(kept.r ORDER BY kept.o) FROM kept), '{}')
               || coalesce((SELECT array_agg(added.r ORDER BY added.o) FROM added), '{}'),
           coalesce((SELECT array_agg(kept.t ORDER BY kept.o) FROM kept), '{}')
               || coalesce((SELECT array_agg(p_now) FROM added), '{}')
$$;
