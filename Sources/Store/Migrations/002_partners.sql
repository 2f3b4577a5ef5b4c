-- Mini-app partners and their sliding-window rate limits.

CREATE TABLE partners (
    id                    uuid PRIMARY KEY,
    mini_app_id           text NOT NULL,
    display_name          text NOT NULL,
    tenant_id             text NOT NULL REFERENCES tenants (id),
    -- SHA-256 (hex) of the `mp_` key; the key itself is never stored.
    key_hash              text NOT NULL UNIQUE,
    rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute > 0),
    rate_limit_per_day    integer NOT NULL CHECK (rate_limit_per_day > 0),
    icon_url              text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    revoked_at            timestamptz
);
-- One active partner per mini-app; a revoked one may be replaced.
CREATE UNIQUE INDEX partners_active_mini_app ON partners (mini_app_id) WHERE revoked_at IS NULL;

-- Accepted requests counted per second (granularity 's', for the minute window) and per minute
-- ('m', for the day window). Old buckets are deleted by the intake's janitor.
CREATE TABLE rate_buckets (
    partner_id  uuid NOT NULL,
    granularity "char" NOT NULL,
    bucket      bigint NOT NULL,
    count       integer NOT NULL,
    PRIMARY KEY (partner_id, granularity, bucket)
);

-- Admits one request for a partner if both sliding windows have room, and counts it. Exact under
-- concurrency across any number of intake processes: a transaction-scoped advisory lock
-- serialises reservations per partner (it works through transaction poolers, unlike session
-- locks). The counters commit asynchronously: a crash may forget the last few milliseconds of
-- counts, which only errs towards admitting, and keeps the lock's hold time at microseconds.
CREATE FUNCTION herald_rate_reserve(
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

-- Gives back a reservation that produced nothing (an idempotent replay found while writing, or
-- a write that failed), so only accepted requests count.
CREATE FUNCTION herald_rate_refund(p_partner uuid, p_seconds bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtextextended(p_partner::text, 7301));
    UPDATE rate_buckets SET count = count - 1
     WHERE partner_id = p_partner AND count > 0
       AND ((granularity = 's' AND bucket = p_seconds) OR (granularity = 'm' AND bucket = p_seconds / 60));
END
$$;
