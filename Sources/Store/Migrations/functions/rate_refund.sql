-- Gives back a reservation that produced nothing (an idempotent replay found while writing, or
-- a write that failed), so only accepted requests count: its two buckets, and the running sums
-- (sql/036_rate_windows.sql) that count them.
CREATE OR REPLACE FUNCTION herald_rate_refund(p_partner uuid, p_seconds bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    WITH given_back AS (
        UPDATE rate_buckets SET count = count - 1
         WHERE partner_id = p_partner AND count > 0
           AND ((granularity = 's' AND bucket = p_seconds) OR (granularity = 'm' AND bucket = p_seconds / 60))
        RETURNING granularity, bucket
    )
    UPDATE rate_windows w
       SET minute_count = w.minute_count - (SELECT count(*) FROM given_back g
                                             WHERE g.granularity = 's' AND g.bucket > w.minute_edge),
           day_count = w.day_count - (SELECT count(*) FROM given_back g
                                       WHERE g.granularity = 'm' AND g.bucket > w.day_edge)
     WHERE w.partner_id = p_partner AND EXISTS (SELECT 1 FROM given_back);
END
$$;
