-- Admits one request for a partner if both sliding windows have room, and counts it. Exact under
-- concurrency across any number of intake processes: a transaction-scoped advisory lock
-- serialises reservations per partner (it works through transaction poolers, unlike session
-- locks). The counters commit asynchronously: a crash may forget the last few milliseconds of
-- counts, which only errs towards admitting, and keeps the lock's hold time at microseconds.
CREATE OR REPLACE FUNCTION herald_rate_reserve(
    p_partner uuid, p_per_minute integer, p_per_day integer,
    OUT admitted boolean, OUT minute_count integer, OUT minute_oldest bigint,
    OUT day_count integer, OUT day_oldest bigint, OUT now_seconds bigint)
LANGUAGE plpgsql AS $$
DECLARE
    now_minute bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    now_seconds := floor(extract(epoch FROM clock_timestamp()));
    now_minute := now_seconds / 60;
    SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO minute_count, minute_oldest
      FROM rate_buckets b
     WHERE b.partner_id = p_partner AND b.granularity = 's' AND b.bucket > now_seconds - 60;
    SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO day_count, day_oldest
      FROM rate_buckets b
     WHERE b.partner_id = p_partner AND b.granularity = 'm' AND b.bucket > now_minute - 1440;
    admitted := minute_count < p_per_minute AND day_count < p_per_day;
    IF admitted THEN
        INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
        VALUES (p_partner, 's', now_seconds, 1), (p_partner, 'm', now_minute, 1)
        ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + 1;
    END IF;
END
$$;
