-- Reminders: the host schedules, for one of its users and on behalf of a mini-app's bundle
-- (`based.notifications.schedule(..., when)`), a notification from that mini-app at a later time.
--
-- A reminder is written as a scheduled partner push is (herald_intake_push, functions/intake_push.sql):
-- an audit row in push_requests, and one outbox row per device of the user with a valid token, due at
-- `at`. The worker sends it like any other delivery, so the claim's checks at send time apply unchanged
-- (opt-out, a token invalidated or taken by another device, a device removed: functions/claim_deliveries.sql).
-- A reminder row adds what the host reads and cancels: the text as given, the time asked for, and the
-- ids of its deliveries (always single rows, never delivery groups), by which it finds them in the
-- outbox without an index on `deliveries.request_id` that every push would pay for.
--
-- Whether a reminder was sent is derived from the outbox, not recorded by the worker: it is pending
-- while every one of its deliveries is still in `deliveries`, pending and never attempted
-- (herald_reminder_pending). Once a worker has taken one, the reminder is past cancelling. `status`
-- keeps what the intake last found: 'scheduled' until a cancel, or until a later schedule, list or
-- cancel finds it no longer pending and writes 'sent' (so the partial index below holds at most
-- HERALD_REMINDER_MAX_PENDING rows per user and mini-app, plus those sent since its last schedule).
CREATE TABLE reminders (
    -- The reminderId (a UUIDv7 made by the intake).
    id                 uuid PRIMARY KEY,
    user_id            text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mini_app_id        text NOT NULL,
    partner_id         uuid NOT NULL,
    -- The audit row (push_requests' primary key, which also names its partition).
    request_id         uuid NOT NULL UNIQUE,
    request_created_at timestamptz NOT NULL,
    -- As the host gave them (the payload and the audit row carry the title with the brand prefix).
    title              text NOT NULL,
    body               text NOT NULL,
    deep_link          text,
    -- The time asked for; the deliveries are due at it, or at creation when it was slightly past.
    at                 timestamptz NOT NULL,
    deliveries         uuid[] NOT NULL CHECK (cardinality(deliveries) > 0),
    status             text NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'sent', 'cancelled')),
    created_at         timestamptz NOT NULL,
    -- When the intake cancelled it or found it sent.
    finished_at        timestamptz
);

-- The user's list (by user_id) and the cap's count (by user and mini-app), among scheduled rows only.
CREATE INDEX reminders_scheduled ON reminders (user_id, mini_app_id, at) WHERE status = 'scheduled';
-- The janitor's retention (MaintenanceStore.deleteFinishedReminders).
CREATE INDEX reminders_at ON reminders (at);
