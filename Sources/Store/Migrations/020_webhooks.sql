-- Delivery webhooks: a partner with a webhookUrl learns a request's outcome, and an
-- activity's end, without polling. Events are written by triggers in the transaction that completes
-- the request (the worker's completion, or the intake's write of a request with nothing to send) or
-- ends the activity, so an event exists exactly when its cause committed; workers send them
-- (Sources/Worker/WebhookSender.swift) with retries for 24 hours.

-- The URL (https; fetched through HTTPFetch's address policy) and the signing secret, both or neither.
-- The secret signs every event (HMAC-SHA256), so it is stored as it is; it is shown to the admin once.
ALTER TABLE partners ADD COLUMN webhook_url text, ADD COLUMN webhook_secret text,
    ADD CONSTRAINT partners_webhook_pair CHECK ((webhook_url IS NULL) = (webhook_secret IS NULL));

CREATE TABLE webhook_events (
    -- Herald-Event-Id: the partner's dedupe key (a retry, or a resend after a crash, carries the same id).
    id               uuid PRIMARY KEY,
    partner_id       uuid NOT NULL,
    type             text NOT NULL CHECK (type IN ('push.completed', 'activity.ended', 'activity.expired')),
    -- The request or activity.
    subject_id       uuid NOT NULL,
    -- The JSON sent, fixed when the event is written: every attempt sends the same bytes.
    body             text NOT NULL,
    created_at       timestamptz NOT NULL,
    -- Retries stop 24 hours after this (`heraldctl webhooks replay` starts a new window).
    window_start     timestamptz NOT NULL,
    state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'delivered', 'failed')),
    available_at     timestamptz NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    leased_by        text,
    lease_expires_at timestamptz,
    -- The last attempt's HTTP status (NULL: no answer) and error code (`timeout`, `http_500`...).
    last_status      integer,
    last_error       text,
    finished_at      timestamptz
);
-- Due events, in order (the claim); events whose sender's lease ran out (a crashed worker's).
CREATE INDEX webhook_events_due ON webhook_events (available_at) WHERE state = 'pending';
CREATE INDEX webhook_events_sending ON webhook_events (lease_expires_at) WHERE state = 'sending';
-- Failed events by partner and time (`heraldctl webhooks replay`), and finished ones by age (cleanup).
CREATE INDEX webhook_events_failed ON webhook_events (partner_id, finished_at) WHERE state = 'failed';
CREATE INDEX webhook_events_finished ON webhook_events (finished_at) WHERE state IN ('delivered', 'failed');
