-- The audit of Live Activities (the seed's rule: every send writes an audit row with its inputs, its
-- recipients and its outcome): one row per start, update and end a partner makes, and per end the system
-- makes (the TTL's `expire`, a replacement's `replace-end` of the old activity), written by the function
-- that writes the change, in its transaction (functions/activity_*.sql, expire_activities.sql).
--
-- Outcomes roll up per event as a push's do per request: each outbox row of an activity carries the id
-- of the event whose payload it holds (`deliveries.activity_event_id`), and the completion adds its
-- outcome to that event (functions/activity_event_counts.sql). When a change rewrites a pending row, or a
-- newer event takes the place of an iPhone's held one, the older event's delivery is `superseded`: it
-- counts there, and the row (or the held event) now belongs to the newer event.
--
-- Partitioned by month like push_requests (the same helper, janitor and `heraldctl partitions`
-- retention). The id is a UUIDv7 made in SQL whose millisecond is `created_at` (herald_uuid_v7_time), so
-- an outbox row needs only the id to name its event's partition.
CREATE TABLE live_activity_events (
    id              uuid NOT NULL,
    created_at      timestamptz NOT NULL,
    activity_id     uuid NOT NULL,
    partner_id      uuid NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('start', 'update', 'end', 'expire', 'replace-end')),
    -- The start's state, an update's patch as the partner sent it (NULL without one), the final state of
    -- an end, an expiry or a replacement's end.
    state           jsonb,
    -- The partner's alert, if it gave one (a start without one shows the attributes).
    alert_title     text,
    -- As the partner gave them: a start's or update's ttlSeconds, an end's dismissAt.
    ttl_seconds     integer,
    dismiss_at      timestamptz,
    idempotency_key text,
    -- The devices the event was queued or held for, per service.
    devices_apns    integer NOT NULL,
    devices_fcm     integer NOT NULL,
    sent            integer NOT NULL DEFAULT 0,
    -- Every final outcome other than sent and superseded (failed, dead, token_invalid, expired, suppressed).
    failed          integer NOT NULL DEFAULT 0,
    superseded      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
-- The partner's list: an activity's events newest first, from the cursor on.
CREATE INDEX live_activity_events_activity ON live_activity_events (activity_id, created_at DESC, id DESC);

SELECT herald_ensure_monthly_partitions('live_activity_events', now() - interval '1 month', 5);

-- The event an outbox row delivers (NULL on pushes and on rows queued before this migration).
ALTER TABLE deliveries ADD COLUMN activity_event_id uuid;
-- The event an iPhone without its update token holds (held_event says which kind).
ALTER TABLE live_activity_targets ADD COLUMN held_event_id uuid;

-- New signatures (functions/activity_dispatch.sql, activity_start.sql, activity_update.sql, activity_end.sql).
DROP FUNCTION IF EXISTS herald_activity_dispatch(uuid[], text, text[], text[], text[], text[], smallint[],
    timestamptz[], text,
                                       smallint);
-- The start and update of 030_live_activity_budgets.sql's signatures (its definition files ran after it; a
-- database migrated from scratch has neither yet).
DROP FUNCTION IF EXISTS herald_activity_start(uuid, text, text, text, uuid, timestamptz, text, text, text, jsonb, jsonb,
                                              jsonb, timestamptz, bigint, text, text, bigint, text[], text[], text[], text,
                                              text, uuid, text, text, bigint, smallint, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS herald_activity_update(uuid, text, text, text, uuid, integer, timestamptz, jsonb, timestamptz,
                                               bigint, text, text, text, text, smallint, text, text, bigint, smallint,
                                               integer, text, text, text);
DROP FUNCTION IF EXISTS herald_activity_end(uuid, text, text, text, uuid, integer, timestamptz, jsonb, timestamptz,
    bigint, text,
                                  text, smallint);
