-- A reminder scheduled with an Idempotency-Key (the host retrying a schedule whose answer it did not get): the
-- same key for the same user within 24 hours answers the first reminder again, a different body with it is
-- refused, and nothing is scheduled twice. The key and the body's SHA-256 are kept on the reminder; a key older
-- than 24 hours is cleared when it is used again. The definitions folder creates herald_schedule_reminder again
-- with the key, the hash and the reminder's id in its answer.
ALTER TABLE reminders ADD COLUMN idempotency_key text, ADD COLUMN body_hash text;
CREATE UNIQUE INDEX reminders_idempotency ON reminders (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
DROP FUNCTION IF EXISTS herald_schedule_reminder(
    uuid, text, text, uuid, text, integer, uuid, timestamptz, text, text, text, text, timestamptz, timestamptz,
    timestamptz, integer, timestamptz, uuid[], text[], text[], text[], text[]);
DELETE FROM schema_functions WHERE name = 'schedule_reminder.sql';
