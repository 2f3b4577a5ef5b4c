-- A partner's two sliding windows at p_now (epoch seconds): the requests counted in the last 60
-- seconds and in the last 1,440 minutes. Read from its running sums (rate_windows, sql/036_rate_windows.sql),
-- each moved forward from its edge by subtracting the buckets it passes: in steady traffic one row and two
-- empty ranges of rate_buckets_pkey. A sum is read from the buckets instead when there is no row, when its
-- edge is ahead of p_now (a clock stepped back), or when it lags by more than 30 s (30 min for the day):
-- the janitor deletes 's' buckets 120 s old and 'm' buckets 1,500 minutes old (Sources/Store/MaintenanceStore.swift),
-- so every bucket a lagging edge still has to subtract is there. Called under the partner's advisory lock.
-- LANGUAGE sql and STABLE, so the planner inlines it into its caller's statement.
CREATE OR REPLACE FUNCTION herald_rate_counts(p_partner uuid, p_now bigint)
RETURNS TABLE (minute_count integer, day_count integer)
LANGUAGE sql STABLE AS $$
    SELECT (CASE WHEN w.partner_id IS NULL OR w.minute_edge > p_now - 60 OR w.minute_edge < p_now - 90
                 THEN (SELECT coalesce(sum(b.count), 0) FROM rate_buckets b
                        WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > p_now - 60)
                 ELSE w.minute_count - (SELECT coalesce(sum(b.count), 0) FROM rate_buckets b
                                         WHERE b.partner_id = p_partner AND b.granularity = 's'
                                           AND b.bucket > w.minute_edge AND b.bucket <= p_now - 60)
            END)::integer,
           (CASE WHEN w.partner_id IS NULL OR w.day_edge > p_now / 60 - 1440 OR w.day_edge < p_now / 60 - 1470
                 THEN (SELECT coalesce(sum(b.count), 0) FROM rate_buckets b
                        WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > p_now / 60 - 1440)
                 ELSE w.day_count - (SELECT coalesce(sum(b.count), 0) FROM rate_buckets b
                                      WHERE b.partner_id = p_partner AND b.granularity = 'm'
                                        AND b.bucket > w.day_edge AND b.bucket <= p_now / 60 - 1440)
            END)::integer
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN rate_windows w ON w.partner_id = p_partner
$$;
