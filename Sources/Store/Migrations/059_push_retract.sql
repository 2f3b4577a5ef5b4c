-- A partner may retract a push (docs/api.md, "Retracting a push"): its deliveries still in the outbox are cancelled
-- (history outcome 'cancelled', counted in push_requests.cancelled), and every device it was sent to, or may have
-- been (a row in flight), gets a silent signed message naming the delivery, for the host app to take the shown
-- notification away (functions/push_retract.sql). The audit row keeps when, how many were cancelled and how many
-- messages went out, and the id their rows carry (retraction_id), under which an operator finds them in history.
-- A retract message is a push row of apns-priority 5 (`deliveries.priority`, until now only set on Live Activity
-- rows): the worker sends it as `apns-push-type: background`. herald_outbox_write takes the priority,
-- herald_webhook_event the counts push.retracted carries; the old signatures go, so no call resolves to them.
ALTER TABLE push_requests ADD COLUMN retracted_at timestamptz, ADD COLUMN retraction_id uuid,
    ADD COLUMN cancelled integer NOT NULL DEFAULT 0, ADD COLUMN retracted integer NOT NULL DEFAULT 0;

-- The sent deliveries of a request, found by the retraction: the index covered only what replay reads (failed,
-- dead and expired pushes, sql/014_drain.sql); it now holds every history row. A sent group row is one entry for
-- up to 50 deliveries.
DROP INDEX delivery_history_request;
CREATE INDEX delivery_history_request ON delivery_history (request_id);

DROP FUNCTION IF EXISTS herald_outbox_write(integer, uuid[], timestamptz[], uuid[], timestamptz[], integer[], text[],
    integer[], uuid[], text[], text[], text[], text[], text[], integer[], integer, text, integer, boolean[], text[]);
DROP FUNCTION IF EXISTS herald_webhook_event(uuid, text, uuid, text, integer, integer, integer, integer);

ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check
    CHECK (type IN ('push.completed', 'push.retracted', 'activity.ended', 'activity.expired', 'activity.dismissed'));
