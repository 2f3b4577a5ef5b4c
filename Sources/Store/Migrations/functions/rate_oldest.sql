-- The oldest bucket of each of a partner's windows at p_now (epoch seconds: a second, and a minute), or
-- NULL for an empty window: when the window frees a slot, for the Retry-After of a refusal. Read only when
-- a request is refused; one descent of rate_buckets_pkey each.
CREATE OR REPLACE FUNCTION herald_rate_oldest(p_partner uuid, p_now bigint)
RETURNS TABLE (minute_oldest bigint, day_oldest bigint)
LANGUAGE sql STABLE AS $$
    SELECT (SELECT min(b.bucket) FROM rate_buckets b
             WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > p_now - 60),
           (SELECT min(b.bucket) FROM rate_buckets b
             WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > p_now / 60 - 1440)
$$;
