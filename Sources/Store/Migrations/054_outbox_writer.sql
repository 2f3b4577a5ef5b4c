-- Every push delivery is written by one function (functions/outbox_write.sql), and its expiry computed by one
-- (functions/push_expiry.sql): herald_intake_push and herald_schedule_reminder no longer take the expiry their
-- callers computed. Their old signatures go, so no call resolves to them, and the definitions folder creates the
-- new ones.
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], timestamptz[], integer[],
    text[], text[], integer[], text[], text[], integer[], uuid[], text[], text[], text[], text, text, integer, integer,
    text[]);
DROP FUNCTION IF EXISTS herald_schedule_reminder(uuid, text, text, uuid, text, integer, uuid, timestamptz, text, text,
    text, text, timestamptz, timestamptz, timestamptz, integer, timestamptz, uuid[], text[], text[], text[], text[],
    text, text);
