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

-- The API's timestamp form (HeraldCore's ISO8601: milliseconds, UTC).
CREATE FUNCTION herald_iso8601(p_time timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- One event for the partner of `p_partner`, if it has a webhook.
CREATE FUNCTION herald_webhook_event(p_partner uuid, p_type text, p_subject uuid, p_subject_key text,
                                     p_sent integer, p_failed integer, p_suppressed integer)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_id  uuid := gen_random_uuid();
    v_now timestamptz := clock_timestamp();
BEGIN
    INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, available_at)
    SELECT v_id, p.id, p_type, p_subject,
           json_build_object('type', p_type, 'id', v_id, p_subject_key, p_subject, 'sent', p_sent,
                             'failed', p_failed, 'suppressed', p_suppressed,
                             'completedAt', herald_iso8601(v_now))::text,
           v_now, v_now, v_now
      FROM partners p
     WHERE p.id = p_partner AND p.webhook_url IS NOT NULL;
END
$$;

-- A request is completed when every delivery has an outcome (PushStatus): when its counts reach that,
-- or at once when it had nothing to send.
CREATE FUNCTION herald_push_completed_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM herald_webhook_event(NEW.partner_id, 'push.completed', NEW.id, 'requestId', NEW.sent, NEW.failed,
                                 NEW.suppressed);
    RETURN NULL;
END
$$;

CREATE TRIGGER push_requests_completed_on_update
    AFTER UPDATE OF sent, failed ON push_requests FOR EACH ROW
    WHEN (NEW.sent + NEW.failed >= NEW.deliveries AND OLD.sent + OLD.failed < OLD.deliveries)
    EXECUTE FUNCTION herald_push_completed_event();
CREATE TRIGGER push_requests_completed_on_insert
    AFTER INSERT ON push_requests FOR EACH ROW
    WHEN (NEW.deliveries = 0)
    EXECUTE FUNCTION herald_push_completed_event();

-- An activity ended by its partner or expired at its TTL. Its counts are its pushes' outcomes so far
-- (the end push itself is still on its way); superseded pushes (a newer state went out instead) are
-- none of them.
CREATE FUNCTION herald_activity_finished_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_sent integer;
    v_failed integer;
    v_suppressed integer;
BEGIN
    SELECT count(*) FILTER (WHERE h.outcome = 'sent'),
           count(*) FILTER (WHERE h.outcome NOT IN ('sent', 'suppressed', 'superseded')),
           count(*) FILTER (WHERE h.outcome = 'suppressed')
      INTO v_sent, v_failed, v_suppressed
      FROM delivery_history h
     WHERE h.request_id = NEW.id;
    PERFORM herald_webhook_event(NEW.partner_id, 'activity.' || NEW.status, NEW.id, 'activityId', v_sent, v_failed,
                                 v_suppressed);
    RETURN NULL;
END
$$;

CREATE TRIGGER live_activities_finished
    AFTER UPDATE OF status ON live_activities FOR EACH ROW
    WHEN (OLD.status = 'active' AND NEW.status IN ('ended', 'expired'))
    EXECUTE FUNCTION herald_activity_finished_event();

-- Leases due events (and events whose sender's lease ran out) to `p_worker`: at most `p_limit`, and per
-- partner at most its room in this worker (`p_room_partners` / `p_rooms`; `p_per_partner` for the others),
-- oldest first, so one partner's backlog or slow endpoint takes no more than its share. Partners with no
-- room are left out of the scan itself, and the scan reads a window of the oldest due events in index
-- order: a claim costs the same with 10 or 100,000 events waiting.
CREATE FUNCTION herald_webhook_claim(p_worker text, p_limit integer, p_per_partner integer,
                                     p_room_partners uuid[], p_rooms integer[], p_lease_seconds integer,
                                     p_now timestamptz)
RETURNS TABLE (id uuid, partner_id uuid, body text, attempts integer, window_start timestamptz, url text,
               secret text)
LANGUAGE sql VOLATILE AS $$
    WITH full_partners AS (
        SELECT coalesce(array_agg(r.partner), '{}') AS ids
          FROM unnest(p_room_partners, p_rooms) AS r (partner, room)
         WHERE r.room <= 0
    ), due AS (
        (SELECT e.id, e.partner_id, e.available_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'pending' AND e.available_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.available_at
          LIMIT p_limit * 4)
        UNION ALL
        (SELECT e.id, e.partner_id, e.lease_expires_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'sending' AND e.lease_expires_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.lease_expires_at
          LIMIT p_limit * 4)
    ), ranked AS (
        SELECT d.id, d.available_at,
               row_number() OVER (PARTITION BY d.partner_id ORDER BY d.available_at, d.id) AS rank,
               coalesce(r.room, p_per_partner) AS room
          FROM due d
          LEFT JOIN unnest(p_room_partners, p_rooms) AS r (partner, room) ON r.partner = d.partner_id
    ), picked AS (
        SELECT e.id
          FROM webhook_events e
         WHERE e.id IN (SELECT k.id FROM ranked k WHERE k.rank <= k.room ORDER BY k.available_at LIMIT p_limit)
           AND (e.state = 'pending' OR (e.state = 'sending' AND e.lease_expires_at <= p_now))
           FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_events e
       SET state = 'sending', leased_by = p_worker, attempts = e.attempts + 1,
           lease_expires_at = p_now + make_interval(secs => p_lease_seconds)
      FROM picked k, partners p
     WHERE e.id = k.id AND p.id = e.partner_id
    RETURNING e.id, e.partner_id, e.body, e.attempts, e.window_start, p.webhook_url, p.webhook_secret
$$;

-- Records the attempts' outcomes: 'delivered', 'failed', or 'retry' at its `p_retry_at`. Only events
-- still leased by `p_worker` change (one rescued meanwhile belongs to its new sender).
CREATE FUNCTION herald_webhook_record(p_worker text, p_ids uuid[], p_outcomes text[], p_statuses integer[],
                                      p_errors text[], p_retry_at timestamptz[], p_now timestamptz)
RETURNS integer
LANGUAGE sql VOLATILE AS $$
    WITH done AS (
        UPDATE webhook_events e
           SET state = CASE o.outcome WHEN 'retry' THEN 'pending' ELSE o.outcome END,
               available_at = CASE o.outcome WHEN 'retry' THEN o.retry_at ELSE e.available_at END,
               finished_at = CASE o.outcome WHEN 'retry' THEN NULL ELSE p_now END,
               last_status = o.status, last_error = o.error, leased_by = NULL, lease_expires_at = NULL
          FROM unnest(p_ids, p_outcomes, p_statuses, p_errors, p_retry_at) AS o (id, outcome, status, error, retry_at)
         WHERE e.id = o.id AND e.state = 'sending' AND e.leased_by = p_worker
        RETURNING 1)
    SELECT count(*)::integer FROM done
$$;
