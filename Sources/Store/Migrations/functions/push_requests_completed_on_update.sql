-- Fires push.completed (functions/push_completed_event.sql) when a request's last delivery finishes.
CREATE OR REPLACE TRIGGER push_requests_completed_on_update
    AFTER UPDATE OF sent, failed, suppressed_deliveries, superseded, cancelled ON push_requests FOR EACH ROW
    WHEN (NEW.sent + NEW.failed + NEW.suppressed_deliveries + NEW.superseded + NEW.cancelled >= NEW.deliveries
          AND OLD.sent + OLD.failed + OLD.suppressed_deliveries + OLD.superseded + OLD.cancelled < OLD.deliveries)
    EXECUTE FUNCTION herald_push_completed_event();
