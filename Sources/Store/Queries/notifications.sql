-- name: notify
-- parameters: channel String, payload String
-- A notification on channel $1 with payload $2, sent when the transaction commits.
SELECT pg_notify($1, $2);

-- name: notifyWithoutFlush
-- parameters: channel String, payload String
-- A notification on channel $1 with payload $2, in a statement that is its own transaction and whose commit does not
-- wait for the disk (set_config's `true` is SET LOCAL: this transaction only, so a transaction pooler hands the
-- connection on unchanged). A notification lost in a crash costs nothing: the workers poll.
SELECT set_config('synchronous_commit', 'off', true) AS synchronous_commit, pg_notify($1, $2);

-- name: listen
-- Subscribes this connection to channel {{channel}} (a name, which no bind parameter can stand for: filled through
-- NamedSQL.filling, which quotes it). Heard from the commit of this connection's current transaction on.
-- unprepared
-- identifiers: channel
LISTEN {{channel}};
