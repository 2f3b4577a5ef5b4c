-- Console sessions tied to the admin token that opened them, signed out when idle, and a limit on failed
-- sign-ins per client address (docs/security.md, *Operator console*).

-- `admin_token_mac`: HMAC-SHA256 of the admin token that signed in, keyed by the session's cookie token, so an
-- intake started without that token (a rotation that dropped it) refuses the session. Keyed by a value this
-- table never holds (it keeps only the cookie token's SHA-256), so a reader of the table cannot test guesses of
-- the admin token. NULL for sessions opened before this column: refused like a dropped token.
-- `last_used_at`: the session's last use, written at most once a minute; idle past HERALD_CONSOLE_IDLE_MINUTES,
-- it is refused.
ALTER TABLE console_sessions
    ADD COLUMN admin_token_mac text,
    ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now();

-- Failed console sign-ins per client address in the current window (functions/console_sign_in_attempt.sql):
-- one row per address, its window starting at its first failure. Kept in Postgres so the limit holds across
-- every intake; the janitor deletes rows whose window ended long ago.
CREATE TABLE console_sign_in_failures (
    client       text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    failures     integer NOT NULL CHECK (failures >= 0)
);
CREATE INDEX console_sign_in_failures_window ON console_sign_in_failures (window_start);
