-- Live Activities: one row per activity, one per (activity, device) it was started on, and
-- their deliveries in the same outbox as pushes.
--
-- Payloads are rendered and signed at intake, like a push's (the intake alone holds the signing keys).
-- So that the TTL sweep and a late token need no rendering, each activity keeps the payloads they send:
-- the newest update for an iPhone whose activity token is not known yet, and the end (the TTL's end
-- while the activity is active, the end that was sent once it ended).
--
-- Plans: every function here is planned once per session (force_generic_plan, as the worker's claim is)
-- and may not scan a table sequentially. Their tables start empty and grow fast (a sweep queues 100,000
-- ends in a minute): a plan cached while they were small read whole tables on each call long after
-- (bench/live-activities measured claims of 160 ms instead of 20). Each statement is written for an
-- index (Tests/StoreTests/ActivityQueryPlanTests.swift); enable_seqscan = off keeps the planner to it.
--
-- Coalescing: an activity has at most one pending delivery per device. A change rewrites that row's
-- payload (the newest state wins) instead of queuing another; a start not sent yet takes the new state
-- and stays a start. A row already in flight is not touched: the change queues one new row. Should an
-- older row come back to pending (a retry, a rescued lease) beside a newer one, the claim finds it
-- superseded and sends only the newer.

CREATE TABLE live_activities (
    id                   uuid PRIMARY KEY,
    partner_id           uuid NOT NULL,
    mini_app_id          text NOT NULL,
    user_id              text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    template             text NOT NULL CHECK (template IN ('progress', 'status', 'countdown')),
    attributes           jsonb NOT NULL,
    state                jsonb NOT NULL,
    -- The start's alert, which a start not yet sent keeps when it takes a newer state.
    start_alert          jsonb NOT NULL,
    status               text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended', 'replaced', 'expired')),
    -- Bumped by every change: an update merges into the version it read, or is retried on a newer one.
    version              integer NOT NULL DEFAULT 1,
    -- aps.timestamp of the newest event, strictly increasing per activity.
    last_timestamp       bigint NOT NULL,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL,
    expires_at           timestamptz NOT NULL,
    ended_at             timestamptz,
    dismiss_at           timestamptz,
    apns_update_payload  text,
    apns_update_priority smallint,
    apns_end_payload     text NOT NULL,
    fcm_end_payload      text NOT NULL,
    -- The timestamp inside the end payloads.
    end_timestamp        bigint NOT NULL
);
-- Statistics that follow the table's fast growth and churn (every activity is updated many times).
ALTER TABLE live_activities SET (autovacuum_analyze_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05);
-- At most one active activity per (user, mini-app); a start replaces the active one.
CREATE UNIQUE INDEX live_activities_one_active ON live_activities (user_id, mini_app_id) WHERE status = 'active';
-- The TTL sweep reads due activities in expiry order, active ones only.
CREATE INDEX live_activities_due ON live_activities (expires_at) WHERE status = 'active';
-- Retention deletes finished activities by age.
CREATE INDEX live_activities_ended ON live_activities (ended_at) WHERE status <> 'active';

CREATE TABLE live_activity_targets (
    activity_id                 uuid NOT NULL REFERENCES live_activities (id) ON DELETE CASCADE,
    device_id                   text NOT NULL,
    service                     text NOT NULL CHECK (service IN ('apns', 'fcm')),
    -- iOS: the activity's own update token, reported by the host after the start arrived.
    update_token                text,
    update_token_invalidated_at timestamptz,
    -- iOS: an update or end that came before the update token; sent (newest state) when it comes.
    held_event                  text CHECK (held_event IN ('update', 'end')),
    PRIMARY KEY (activity_id, device_id)
);

ALTER TABLE deliveries
    ADD COLUMN activity_id uuid,
    ADD COLUMN activity_event text CHECK (activity_event IN ('start', 'update', 'end')),
    -- apns-priority of a Live Activity push (5 silent, 10 with an alert); pushes are always 10.
    ADD COLUMN priority smallint;
-- The pending and in-flight rows of one activity on one device (coalescing, supersession).
CREATE INDEX deliveries_activity ON deliveries (activity_id, device_id) WHERE activity_id IS NOT NULL;

ALTER TABLE delivery_history ADD COLUMN activity_event text;
ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_outcome_check;
ALTER TABLE delivery_history ADD CONSTRAINT delivery_history_outcome_check
    CHECK (outcome IN ('sent', 'failed', 'dead', 'token_invalid', 'expired', 'suppressed', 'superseded'));

-- An activity's answers are 201 or 200, a push's 202: the replay repeats the status too.
ALTER TABLE idempotency_keys ADD COLUMN status smallint NOT NULL DEFAULT 202;

-- The claim returns each row's Live Activity event and priority, picks the token the event goes to,
-- and finds starts of ended activities and rows with a newer row for the same device 'superseded'.
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[]);
