-- The audit log of push requests (partitioned by month) and idempotency keys.

-- Creates the monthly partitions of `parent` covering `months` months from the month of `start`.
-- Serialised by an advisory lock so several processes may call it at once.
CREATE FUNCTION herald_ensure_monthly_partitions(parent text, start timestamptz, months integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    first_month date := date_trunc('month', start AT TIME ZONE 'UTC')::date;
    lower_bound date;
    partition_name text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_partitions', 0));
    FOR i IN 0 .. months - 1 LOOP
        lower_bound := (first_month + make_interval(months => i))::date;
        partition_name := format('%s_%s', parent, to_char(lower_bound, 'YYYY_MM'));
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
            partition_name, parent,
            (lower_bound::timestamp AT TIME ZONE 'UTC'),
            ((lower_bound + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
    END LOOP;
END
$$;

-- One row per accepted push. `id` is a UUIDv7 whose timestamp is `created_at`, so a lookup by
-- id also names its partition. Deliberately no DEFAULT partition: DETACH PARTITION CONCURRENTLY,
-- which retention relies on, is impossible when one exists.
CREATE TABLE push_requests (
    id              uuid NOT NULL,
    created_at      timestamptz NOT NULL,
    partner_id      uuid NOT NULL,
    mini_app_id     text NOT NULL,
    idempotency_key text,
    title           text NOT NULL,
    body            text NOT NULL,
    deep_link       text,
    data            jsonb NOT NULL,
    send_at         timestamptz,
    ttl_seconds     integer,
    expires_at      timestamptz,
    lane            smallint NOT NULL,
    recipients      integer NOT NULL,
    deliveries      integer NOT NULL,
    suppressed      integer NOT NULL,
    missing         jsonb NOT NULL,
    sent            integer NOT NULL DEFAULT 0,
    failed          integer NOT NULL DEFAULT 0,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);

SELECT herald_ensure_monthly_partitions('push_requests', now() - interval '1 month', 5);

-- Idempotency keys live 24 hours. The stored response is replayed byte for byte; `body_hash`
-- (SHA-256 of the request body) tells a retry from a different request reusing the key.
CREATE TABLE idempotency_keys (
    partner_id uuid NOT NULL,
    key        text NOT NULL,
    body_hash  text NOT NULL,
    request_id uuid NOT NULL,
    response   text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (partner_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
