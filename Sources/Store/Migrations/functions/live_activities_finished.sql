-- Fires the activity's finished event (functions/activity_finished_event.sql) when it ends, is
-- expires or is dismissed on every device (functions/activity_settle.sql); not when replaced.
CREATE OR REPLACE TRIGGER live_activities_finished
    AFTER UPDATE OF status ON live_activities FOR EACH ROW
    WHEN (OLD.status = 'active' AND NEW.status IN ('ended', 'expired', 'dismissed'))
    EXECUTE FUNCTION herald_activity_finished_event();
