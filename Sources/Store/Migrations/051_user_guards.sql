-- The host's guards for a user across partners (docs/api-host.md): quiet hours in the
-- user's time zone, and a cap on the partner pushes one user gets an hour from all mini-apps.

-- A user's quiet hours, local times in `time_zone` (an IANA name; NULL: UTC). Both ends or neither; an end equal
-- to the start would be all day or none, so it is refused. The host's PUT replaces them with the rest of the user.
ALTER TABLE users
    ADD COLUMN time_zone text,
    ADD COLUMN quiet_start time,
    ADD COLUMN quiet_end time,
    ADD CONSTRAINT users_quiet_hours CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND quiet_start <> quiet_end);
-- The users who have quiet hours, few of all: the claim asks whether any has them (one probe a batch), and whether a
-- row's user does (one probe a row, no heap visit).
CREATE INDEX users_quiet_hours ON users (id) WHERE quiet_start IS NOT NULL;

-- The interruption level of a partner push, which the guards read without parsing the payload: `passive` and
-- `active` wait out quiet hours, `time-sensitive` passes them; each counts towards the cap. NULL for what the
-- guards leave alone: Live Activity rows, the user's own reminders, retractions, backfills and replays. A domain,
-- as the outbox's other enumerated columns (040_delivery_domains.sql); a group row's level is its members'.
CREATE DOMAIN delivery_interruption_level AS text
    CONSTRAINT delivery_interruption_level_known CHECK (VALUE IN ('passive', 'active', 'time-sensitive'));
ALTER TABLE deliveries ADD COLUMN interruption_level delivery_interruption_level;

-- Per user, the partner pushes a worker took for sending in the last hour (a sliding window): the requests and
-- when each was first taken, at most the cap's worth. A push to several of a user's devices is one push; a retry
-- of a counted push is not counted again. One row per user, updated by INSERT ... ON CONFLICT in the claim's
-- transaction, so two workers' claims for one user are serialised by its row lock (functions/user_guards.sql).
CREATE TABLE user_push_windows (
    user_id  text PRIMARY KEY,
    requests uuid[] NOT NULL,
    taken_at timestamptz[] NOT NULL
);

-- New signatures (functions/put_user.sql, intake_push.sql, claim_deliveries.sql): the old ones go, so no call
-- resolves to them.
DROP FUNCTION IF EXISTS herald_put_user(text, text, text[], text[]);
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], timestamptz[], integer[],
    text[], text[], integer[], text[], text[], integer[], uuid[], text[], text[], text, text, integer, integer);
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[],
    integer);
