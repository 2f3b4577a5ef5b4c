-- The completion events' triggers look for the partner's webhook first. sql/020's triggers called herald_webhook_event for every completed request and
-- every finished activity, and that function found out only in its INSERT that the partner has no
-- webhook: 49 µs a completed request at 1,000 pushes/s for partners without one (a new id, the clock,
-- a nested call, an INSERT's plan set up), and a scan of the activity's history before that. Now a
-- partner without a webhook costs one probe of `partners_pkey`.
CREATE OR REPLACE FUNCTION herald_push_completed_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM partners p WHERE p.id = NEW.partner_id AND p.webhook_url IS NOT NULL) THEN
        PERFORM herald_webhook_event(NEW.partner_id, 'push.completed', NEW.id, 'requestId', NEW.sent, NEW.failed,
                                     NEW.suppressed);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION herald_activity_finished_event() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_sent integer;
    v_failed integer;
    v_suppressed integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM partners p WHERE p.id = NEW.partner_id AND p.webhook_url IS NOT NULL) THEN
        RETURN NULL;
    END IF;
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
