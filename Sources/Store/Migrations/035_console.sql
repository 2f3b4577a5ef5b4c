-- The operator console (docs/console.md): its sign-in sessions and the workers' heartbeats.

-- One row per console sign-in. The cookie carries a random token; only its SHA-256 (hex) is stored, so a
-- reader of this table cannot sign in. A session ends at `expires_at` or when signed out (`revoked_at`);
-- the intake's janitor deletes rows a day after either.
CREATE TABLE console_sessions (
    token_hash  text PRIMARY KEY,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    revoked_at  timestamptz,
    -- The address the sign-in came from, for the audit log line; never used to decide anything.
    client      text
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- One row per running worker, upserted by its heartbeat service every few seconds. A row whose `last_seen_at`
-- is older than a few heartbeats belongs to a lost worker (killed, partitioned or stuck); the janitor
-- deletes rows not seen for a day.
CREATE TABLE worker_heartbeats (
    worker_id          text PRIMARY KEY,
    host               text NOT NULL,
    version            text NOT NULL,
    started_at         timestamptz NOT NULL,
    last_seen_at       timestamptz NOT NULL,
    -- Deliveries claimed and not yet recorded at the last beat.
    in_flight          integer NOT NULL CHECK (in_flight >= 0),
    -- Upstreams paused by a setup fault ('apns', 'fcm') at the last beat.
    paused_upstreams   text[] NOT NULL DEFAULT '{}',
    -- Deliveries claimed per second since the previous beat.
    claims_per_second  float8 NOT NULL CHECK (claims_per_second >= 0),
    -- Seconds between beats, so readers judge "lost" by the worker's own cadence.
    interval_seconds   float8 NOT NULL CHECK (interval_seconds > 0)
);
CREATE INDEX worker_heartbeats_last_seen ON worker_heartbeats (last_seen_at);

-- The console's request search by partner, newest first: the audit log's ids are UUIDv7, so id order is
-- creation order within a partner. Time-only searches use the primary key (id, created_at) backwards. One
-- more entry per accepted push on the audit log, none on the outbox.
CREATE INDEX push_requests_mini_app ON push_requests (mini_app_id, id);
