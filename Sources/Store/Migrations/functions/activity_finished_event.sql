-- Queues the finished event of an activity that ended, was replaced or expired, if its partner has a
-- webhook (looked up first, as in functions/push_completed_event.sql).
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
