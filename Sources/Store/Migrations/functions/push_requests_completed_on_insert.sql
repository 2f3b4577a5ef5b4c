-- Fires push.completed (functions/push_completed_event.sql) for a request written already complete
-- (nothing to deliver).
CREATE OR REPLACE TRIGGER push_requests_completed_on_insert
    AFTER INSERT ON push_requests FOR EACH ROW
    WHEN (NEW.deliveries = 0)
    EXECUTE FUNCTION herald_push_completed_event();
