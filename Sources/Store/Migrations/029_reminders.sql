-- Reminders: the host schedules, for one of its users and on behalf of a mini-app's bundle
-- (`based.notifications.schedule(..., when)`), a notification from that mini-app at a later time.
--
-- A reminder is written as a scheduled partner push is (herald_intake_push, sql/021_intake_push_slots.sql):
-- an audit row in push_requests, and one outbox row per device of the user with a valid token, due at
-- `at`. The worker sends it like any other delivery, so the claim's checks at send time apply unchanged
-- (opt-out, a token invalidated or taken by another device, a device removed: sql/022_claim_opt_out_once.sql).
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

-- True while every delivery of a reminder is still queued and untouched: in the outbox, pending, never
-- attempted. A delivery a worker claimed has attempts > 0 (kept on a retry, given back when an upstream
-- setup fault deferred it unsent), and a finished one has left the outbox. Probes deliveries_pkey.
CREATE FUNCTION herald_reminder_pending(p_deliveries uuid[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT count(*) = cardinality(p_deliveries)
      FROM deliveries d
     WHERE d.id = ANY (p_deliveries) AND d.state = 'pending' AND d.attempts = 0;
$$;

-- Schedules one reminder, exact under concurrency: a transaction-scoped advisory lock per (user,
-- mini-app) serialises every schedule of that pair across intake processes, so the count of pending
-- reminders and the insert cannot interleave. The intake resolved the user's devices and rendered one
-- signed payload per device before (Sources/Store/ReminderStore.swift); here the user is looked up
-- again (removed, or moved to another tenant, meanwhile), reminders found sent are marked, and the
-- cap is checked before anything is written.
--
-- Outcomes: 'scheduled' (with the pending count including this one), 'limited' (the pending count),
-- 'user_not_found', 'tenant_mismatch'; only 'scheduled' writes.
CREATE FUNCTION herald_schedule_reminder(
    p_reminder uuid, p_user text, p_tenant text, p_partner uuid, p_mini_app text, p_max_pending integer,
    p_request uuid, p_created timestamptz, p_title text, p_shown_title text, p_body text, p_deep_link text,
    p_at timestamptz, p_due timestamptz, p_send_at timestamptz, p_ttl integer, p_expires timestamptz,
    p_delivery uuid[], p_service text[], p_device text[], p_environment text[], p_payload text[])
RETURNS TABLE (outcome text, pending integer)
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant  text;
    v_pending integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_user || '/' || p_mini_app, 7313));
    SELECT u.tenant_id INTO v_tenant FROM users u WHERE u.id = p_user;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'user_not_found'::text, 0;
        RETURN;
    END IF;
    IF v_tenant <> p_tenant THEN
        RETURN QUERY SELECT 'tenant_mismatch'::text, 0;
        RETURN;
    END IF;

    UPDATE reminders r SET status = 'sent', finished_at = now()
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled'
       AND NOT herald_reminder_pending(r.deliveries);
    SELECT count(*) INTO v_pending FROM reminders r
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled';
    IF v_pending >= p_max_pending THEN
        RETURN QUERY SELECT 'limited'::text, v_pending;
        RETURN;
    END IF;

    -- The audit row of a one-recipient push without partner data: the partner's GET of it, its counts,
    -- the push.completed webhook and heraldctl's stats and replay treat it as they treat a push.
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body, deep_link,
        data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    VALUES (p_request, p_created, p_partner, p_mini_app, NULL, p_shown_title, p_body, p_deep_link, '{}', p_send_at,
            p_ttl, p_expires, 0, 1, cardinality(p_delivery), 0, '{"emails":[],"wallets":[]}');
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    VALUES (p_user, p_mini_app, p_created)
    ON CONFLICT DO NOTHING;
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
        environment, payload, available_at, expires_at)
    SELECT x.id, p_request, p_created, p_partner, 0, x.service, p_user, x.device, x.environment, x.payload, p_due,
           p_expires
      FROM unnest(p_delivery, p_service, p_device, p_environment, p_payload) AS x (id, service, device, environment,
                                                                                  payload);
    INSERT INTO reminders (id, user_id, mini_app_id, partner_id, request_id, request_created_at, title, body,
        deep_link, at, deliveries, created_at)
    VALUES (p_reminder, p_user, p_mini_app, p_partner, p_request, p_created, p_title, p_body, p_deep_link, p_at,
            p_delivery, p_created);
    RETURN QUERY SELECT 'scheduled'::text, v_pending + 1;
END
$$;

-- Cancels a user's reminder: its deliveries leave the outbox (nothing is sent) and its audit row
-- counts none, so the request reads as completed with nothing sent (an UPDATE of `deliveries` fires no
-- push.completed webhook, sql/020_webhooks.sql). Safe against a worker's claim: the deliveries are
-- locked before they are checked, a claim skips locked rows (SKIP LOCKED), and a row a claim took
-- first is seen leased once that claim commits, so a reminder is either cancelled whole or found sent.
--
-- Outcomes: 'cancelled' (also when it already was: cancelling is idempotent), 'sent', 'not_found'
-- (no such reminder of this user).
CREATE FUNCTION herald_cancel_reminder(p_reminder uuid, p_user text)
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_reminder reminders%ROWTYPE;
    v_locked   integer;
BEGIN
    SELECT * INTO v_reminder FROM reminders r WHERE r.id = p_reminder AND r.user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF v_reminder.status <> 'scheduled' THEN
        RETURN v_reminder.status;
    END IF;
    SELECT count(*) INTO v_locked FROM (
        SELECT 1 FROM deliveries d
         WHERE d.id = ANY (v_reminder.deliveries) AND d.state = 'pending' AND d.attempts = 0
           FOR UPDATE) AS x;
    IF v_locked < cardinality(v_reminder.deliveries) THEN
        UPDATE reminders SET status = 'sent', finished_at = now() WHERE id = p_reminder;
        RETURN 'sent';
    END IF;
    DELETE FROM deliveries d WHERE d.id = ANY (v_reminder.deliveries);
    UPDATE push_requests p SET deliveries = p.deliveries - v_locked
     WHERE p.id = v_reminder.request_id AND p.created_at = v_reminder.request_created_at;
    UPDATE reminders SET status = 'cancelled', finished_at = now() WHERE id = p_reminder;
    RETURN 'cancelled';
END
$$;
