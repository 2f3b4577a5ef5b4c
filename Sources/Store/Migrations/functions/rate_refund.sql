-- Gives back a reservation that produced nothing (an idempotent replay found while writing, or
-- a write that failed), so only accepted requests count.
CREATE OR REPLACE FUNCTION herald_rate_refund(p_partner uuid, p_seconds bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    UPDATE rate_buckets SET count = count - 1
     WHERE partner_id = p_partner AND count > 0
       AND ((granularity = 's' AND bucket = p_seconds) OR (granularity = 'm' AND bucket = p_seconds / 60));
END
$$;
