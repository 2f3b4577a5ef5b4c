-- The outbox. `deliveries` holds only work that is pending or leased: a finished delivery leaves
-- it (moved to `delivery_history`), so the hot table stays small however long Herald runs.

CREATE TABLE deliveries (
    id                 uuid PRIMARY KEY,
    request_id         uuid NOT NULL,
    request_created_at timestamptz NOT NULL,
    partner_id         uuid NOT NULL,
    -- 0 realtime (partner traffic), 1 bulk (operator backfills): realtime is claimed first.
    lane               smallint NOT NULL DEFAULT 0,
    state              text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'leased')),
    service            text NOT NULL CHECK (service IN ('apns', 'fcm')),
    user_id            text NOT NULL,
    device_id          text NOT NULL,
    environment        text NOT NULL,
    -- The exact bytes to send (APNs body, or the FCM message without token and ttl), rendered
    -- and size-checked at intake.
    payload            text NOT NULL,
    attempts           integer NOT NULL DEFAULT 0,
    available_at       timestamptz NOT NULL,
    expires_at         timestamptz,
    lease_expires_at   timestamptz,
    leased_by          text,
    last_error         text,
    created_at         timestamptz NOT NULL DEFAULT now()
) WITH (
    -- Every row is updated at least once (claim) and then deleted: leave room on each page and
    -- let autovacuum reclaim dead tuples early and without throttling.
    fillfactor = 70,
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_analyze_scale_factor = 0.02
);

-- The claim reads due rows in lane order then age; the partial index holds pending rows only, so
-- leased rows and dead index entries of finished rows are not re-scanned by every claim.
CREATE INDEX deliveries_due ON deliveries (lane, available_at) WHERE state = 'pending';
-- The rescuer finds expired leases without scanning pending rows.
CREATE INDEX deliveries_lease ON deliveries (lease_expires_at) WHERE state = 'leased';

-- Finished deliveries, partitioned by month for retention.
CREATE TABLE delivery_history (
    id          uuid NOT NULL,
    request_id  uuid NOT NULL,
    partner_id  uuid NOT NULL,
    lane        smallint NOT NULL,
    service     text NOT NULL,
    user_id     text NOT NULL,
    device_id   text NOT NULL,
    outcome     text NOT NULL CHECK (outcome IN ('sent', 'failed', 'dead', 'token_invalid', 'expired', 'suppressed')),
    attempts    integer NOT NULL,
    last_error  text,
    created_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    PRIMARY KEY (id, finished_at)
) PARTITION BY RANGE (finished_at);
CREATE INDEX delivery_history_request ON delivery_history (request_id);

SELECT herald_ensure_monthly_partitions('delivery_history', now() - interval '1 month', 5);
