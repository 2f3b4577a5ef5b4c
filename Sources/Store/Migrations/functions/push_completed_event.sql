-- Queues push.completed for a request whose deliveries are all finished, if its partner has a
-- webhook. The webhook is looked up first, so a partner without one costs one probe of partners_pkey.
-- `suppressed` is the status's: users opted out at acceptance, and deliveries suppressed since
-- (sql/052_user_guards_visible.sql).
CREATE OR REPLACE FUNCTION herald_push_completed_event() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM partners p WHERE p.id = NEW.partner_id AND p.webhook_url IS NOT NULL) THEN
        PERFORM herald_webhook_event(NEW.partner_id, 'push.completed', NEW.id, 'requestId', NEW.sent, NEW.failed,
                                     NEW.suppressed + NEW.suppressed_deliveries, NEW.superseded, NEW.cancelled);
    END IF;
    RETURN NULL;
END
$$;
