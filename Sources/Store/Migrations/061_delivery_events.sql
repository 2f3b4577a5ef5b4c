-- Delivery events: what the host's app reports of a push it delivered (docs/api-host.md, "Delivery events"):
-- `received` from its notification service extension, `opened` or `dismissed` from its tap handler, each stored
-- once per delivery (functions/delivery_event.sql). The audit row of the push keeps the counts, so a request's
-- status and the console read them without counting; a partner with a webhook hears of opens as push.opened.
--
-- delivery_events is partitioned by month on the push's acceptance (request_created_at, a function of the
-- delivery), as push_requests is, so a month of events leaves with its month of requests. Its primary key holds the
-- partition key, and is still one row per (delivery, event): a delivery has one acceptance time.
CREATE TABLE delivery_events (
    delivery_id uuid NOT NULL,
    event text NOT NULL CHECK (event IN ('received', 'opened', 'dismissed')),
    at timestamptz NOT NULL,
    request_id uuid NOT NULL,
    request_created_at timestamptz NOT NULL,
    partner_id uuid NOT NULL,
    recorded_at timestamptz NOT NULL,
    PRIMARY KEY (delivery_id, event, request_created_at)
) PARTITION BY RANGE (request_created_at);

ALTER TABLE push_requests
    ADD COLUMN received integer NOT NULL DEFAULT 0,
    ADD COLUMN opened integer NOT NULL DEFAULT 0,
    ADD COLUMN dismissed integer NOT NULL DEFAULT 0;

-- Finding a delivery by the id its payload carries (functions/delivery_find.sql). A finished single push delivery
-- by its id; a member of a group row (its id is in `members`, never the row's own id) by a GIN index that only
-- group rows enter, in history and in the outbox. Each is paid on the writes of its rows; the outbox's only by
-- group rows, at most one per 16 to 50 deliveries. Built without CONCURRENTLY (a partitioned table has no such
-- build), so on a large history this migration holds writes to delivery_history while it runs.
CREATE INDEX delivery_history_id ON delivery_history (id) WHERE members IS NULL AND activity_event IS NULL;
CREATE INDEX delivery_history_members ON delivery_history USING gin (members) WHERE members IS NOT NULL;
CREATE INDEX deliveries_members ON deliveries USING gin (members) WHERE members IS NOT NULL;

-- push.opened is coalesced: a request's pending event no sender has tried yet is the one each report rewrites.
-- Not unique: an event a sender tried keeps its body (a retry is the same event), and a new one waits beside it.
CREATE INDEX webhook_events_opened_pending ON webhook_events (subject_id)
    WHERE type = 'push.opened' AND state = 'pending' AND attempts = 0;

ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check
    CHECK (type IN ('push.completed', 'push.retracted', 'push.opened', 'activity.ended', 'activity.expired',
                    'activity.dismissed'));

-- The monthly partitions from two months back (an event counts for 30 days after its push's acceptance,
-- HeraldCore/DeliveryEvent.swift), five ahead; functions/ensure_monthly_partitions.sql makes the later ones.
DO $$
DECLARE
    first_month date := date_trunc('month', (now() - interval '2 months') AT TIME ZONE 'UTC')::date;
    lower_bound date;
BEGIN
    FOR i IN 0 .. 6 LOOP
        lower_bound := first_month + make_interval(months => i);
        EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF delivery_events FOR VALUES FROM (%L) TO (%L)',
                       'delivery_events' || to_char(lower_bound, '_YYYY_MM'),
                       lower_bound::timestamp AT TIME ZONE 'UTC',
                       (lower_bound + interval '1 month')::timestamp AT TIME ZONE 'UTC');
    END LOOP;
END
$$;
