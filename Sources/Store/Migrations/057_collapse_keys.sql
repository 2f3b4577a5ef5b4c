-- A push may carry a collapse key (docs/api.md, "Replacing a push"): its deliveries keep the collapse id derived from
-- the mini-app and the key (functions/collapse_id.sql), which the worker sends as apns-collapse-id and FCM's
-- collapse_key, and a newer push with the same id marks the older deliveries still queued for the same device as
-- superseded (superseded_by: the newer delivery), which the next claim records without sending. The audit row keeps
-- the key and counts its superseded deliveries; history keeps the id, so a replay collapses as the first send did.
-- herald_outbox_write, herald_intake_push, herald_claim_deliveries and herald_webhook_event (push.completed carries
-- `superseded`) change their signatures: the old ones go, so no
-- call resolves to them, and the definitions folder creates the new ones.
ALTER TABLE deliveries ADD COLUMN collapse_id text, ADD COLUMN superseded_by uuid;
ALTER TABLE delivery_history ADD COLUMN collapse_id text;
ALTER TABLE push_requests ADD COLUMN collapse_key text, ADD COLUMN superseded integer NOT NULL DEFAULT 0;

-- The older deliveries a newer push supersedes: only rows with a collapse id are indexed.
CREATE INDEX deliveries_collapse ON deliveries (collapse_id, device_id) WHERE collapse_id IS NOT NULL;

DROP FUNCTION IF EXISTS herald_outbox_write(integer, uuid[], timestamptz[], uuid[], timestamptz[], integer[], text[],
    integer[], uuid[], text[], text[], text[], text[], text[], integer[], integer, text, integer, boolean[]);
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], integer[], text[],
    text[], integer[], text[], text[], integer[], uuid[], text[], text[], text[], text, text, integer, integer,
    text[]);
DROP FUNCTION IF EXISTS herald_webhook_event(uuid, text, uuid, text, integer, integer, integer);
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[],
    integer, integer);
