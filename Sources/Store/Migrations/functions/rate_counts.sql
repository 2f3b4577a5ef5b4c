-- A partner's two sliding windows at p_now (epoch seconds): the requests counted in the last 60
-- seconds and in the last 1,440 minutes. Read from its running sums (rate_windows, sql/036_rate_windows.sql),
-- each moved forward from its edge by subtracting the buckets it passes: in steady traffic one row, and a
-- range of rate_buckets_pkey only for a window whose edge moved (once a second, once a minute). A sum is read
-- from the buckets instead when there is no row, when its edge is ahead of p_now (a clock stepped back), or
-- when it lags by more than 30 s (30 min for the day): the janitor deletes 's' buckets 120 s old and 'm'
-- buckets 1,500 minutes old (Sources/Store/MaintenanceStore.swift), so every bucket a lagging edge still has
-- to subtract is there. Called under the partner's advisory lock, by a statement whose snapshot was taken
-- after it (STABLE: the statements below read with that snapshot).
-- plpgsql, so that only the branch a window needs is planned and run: one SQL expression of all four (each
-- an aggregate over an index range) started all four plans on every call, most of a push's rate check.
CREATE OR REPLACE FUNCTION herald_rate_counts(p_partner uuid, p_now bigint,
                                              OUT minute_count integer, OUT day_count integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    w record;
BEGIN
    SELECT r.minute_edge, r.minute_count, r.day_edge, r.day_count INTO w
      FROM rate_windows r WHERE r.partner_id = p_partner;
    IF w.minute_edge IS NULL OR w.minute_edge > p_now - 60 OR w.minute_edge < p_now - 90 THEN
        SELECT coalesce(sum(b.count), 0) INTO minute_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > p_now - 60;
    ELSIF w.minute_edge < p_now - 60 THEN
        SELECT w.minute_count - coalesce(sum(b.count), 0) INTO minute_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > w.minute_edge AND b.bucket <= p_now - 60;
    ELSE
        minute_count := w.minute_count;
    END IF;
    IF w.day_edge IS NULL OR w.day_edge > p_now / 60 - 1440 OR w.day_edge < p_now / 60 - 1470 THEN
        SELECT coalesce(sum(b.count), 0) INTO day_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > p_now / 60 - 1440;
    ELSIF w.day_edge < p_now / 60 - 1440 THEN
        SELECT w.day_count - coalesce(sum(b.count), 0) INTO day_count FROM rate_buckets b
         WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > w.day_edge
           AND b.bucket <= p_now / 60 - 1440;
    ELSE
        day_count := w.day_count;
    END IF;
END
$$;
