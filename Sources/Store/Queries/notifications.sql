-- name: notify
-- parameters: channel String, payload String
-- A notification on channel $1 with payload $2, sent when the transaction commits.
SELECT pg_notify($1, $2);
