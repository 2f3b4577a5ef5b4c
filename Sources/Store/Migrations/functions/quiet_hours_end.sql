-- When the quiet hours a user is in at p_now end, or NULL when p_now is outside them: local times p_start to p_end
-- in time zone p_zone (NULL: UTC), spanning midnight when the end comes before the start. The end is the next
-- p_end on the local clock, turned back into an instant (Postgres' time zone rules place a local time that a
-- daylight-saving change skips). A LANGUAGE sql expression, inlined into the guards' query
-- (functions/user_guards.sql).
CREATE OR REPLACE FUNCTION herald_quiet_hours_end(p_zone text, p_start time, p_end time, p_now timestamptz)
RETURNS timestamptz
LANGUAGE sql STABLE
AS $$
    SELECT CASE
               WHEN p_start IS NULL THEN NULL
               WHEN CASE WHEN p_start < p_end THEN l.t >= p_start AND l.t < p_end
                         ELSE l.t >= p_start OR l.t < p_end END
                   THEN ((l.day + p_end) + CASE WHEN p_end <= l.t THEN interval '1 day' ELSE interval '0' END)
                        AT TIME ZONE coalesce(p_zone, 'UTC')
           END
      FROM (SELECT (p_now AT TIME ZONE coalesce(p_zone, 'UTC'))::time AS t,
                   (p_now AT TIME ZONE coalesce(p_zone, 'UTC'))::date AS day) AS l
$$;
