-- What a request's status shows of the host's guards (sql/051_user_guards.sql; docs/api.md, *Sending a push*).

-- The deliveries of a request suppressed after it was accepted: its user opted out of the mini-app since, or was
-- over HERALD_USER_MAX_PUSHES_PER_HOUR (`user_cap`). Final, as sent and failed are, and counted apart from them
-- (functions/complete_deliveries.sql); `suppressed` stays the users who had opted out at acceptance and got no
-- delivery. A request is complete when sent + failed + suppressed_deliveries reach its deliveries.
ALTER TABLE push_requests ADD COLUMN suppressed_deliveries integer NOT NULL DEFAULT 0;

-- The rows waiting for their user's quiet hours (functions/user_guards.sql): a status's `held` counts a request's (the
-- `held` fragment of Queries/push_requests.sql), and a host PUT that changes a user's quiet hours makes that user's due
-- at once (functions/put_user.sql). Only held rows are in them, so they stay as small as the held backlog; a row leaves
-- them when it is claimed (state) or retried for another reason (last_error). The outbox has no index by request or
-- user for every row on purpose: each would be written by every enqueue.
CREATE INDEX deliveries_held_request ON deliveries (request_id) WHERE last_error = 'quiet_hours' AND state = 'pending';
CREATE INDEX deliveries_held_user ON deliveries (user_id) WHERE last_error = 'quiet_hours' AND state = 'pending';

-- New signatures (functions/put_user.sql, backfill_users.sql): a users-file line may leave the guards as they are.
DROP FUNCTION IF EXISTS herald_put_user(text, text, text[], text[], text, time, time);
DROP FUNCTION IF EXISTS herald_backfill_users(integer[], text[], text[], integer[], integer[], text[], integer[],
    integer[], text[], integer[], integer[], text[], text[], text[], text[], text[], text[], text[], text[]);
