-- Admits one request for a partner if both sliding windows have room, and counts it. Exact under
-- concurrency across any number of intake processes: a transaction-scoped advisory lock
-- serialises reservations per partner (it works through transaction poolers, unlike session
-- locks). The counters commit asynchronously: a crash may forget the last few milliseconds of
-- counts, which only errs towards admitting, and keeps the lock's hold time at microseconds.
-- The windows' sums come from functions/rate_counts.sql; the oldest buckets (for Retry-After) are
-- read only for a refusal and are NULL when the request is admitted.
CREATE OR REPLACE FUNCTION herald_rate_reserve(
    p_partner uuid, p_per_minute integer, p_per_day integer,
    OUT admitted boolean, OUT minute_count integer, OUT minute_oldest bigint,
    OUT day_count integer, OUT day_oldest bigint, OUT now_seconds bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    now_seconds := floor(extract(epoch FROM clock_timestamp()));
    SELECT c.minute_count, c.day_count INTO minute_count, day_count FROM herald_rate_counts(p_partner, now_seconds) c;
    admitted := minute_count < p_per_minute AND day_count < p_per_day;
    IF admitted THEN
        WITH counted AS (
            INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
            VALUES (p_partner, 's', now_seconds, 1), (p_partner, 'm', now_seconds / 60, 1)
            ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + 1
        )
        INSERT INTO rate_windows AS w (partner_id, minute_edge, minute_count, day_edge, day_count)
        VALUES (p_partner, now_seconds - 60, minute_count + 1, now_seconds / 60 - 1440, day_count + 1)
        ON CONFLICT (partner_id) DO UPDATE
           SET minute_edge = EXCLUDED.minute_edge, minute_count = EXCLUDED.minute_count,
               day_edge = EXCLUDED.day_edge, day_count = EXCLUDED.day_count;
    ELSE
        SELECT o.minute_oldest, o.day_oldest INTO minute_oldest, day_oldest FROM herald_rate_oldest(p_partner, now_seconds) o;
    END IF;
END
$$;
