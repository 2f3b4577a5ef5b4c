-- An active activity that no device shows any more (each device dismissed or ended it by its own word, or
-- is unconfirmed: the start created nothing there; an Android phone that declined the promotion to a Live
-- Update, 'not_promoted', still shows it) becomes 'dismissed' for the partner, and its finished
-- event follows (functions/live_activities_finished.sql). The caller holds the activity's row lock.
-- Returns whether it did.
CREATE OR REPLACE FUNCTION herald_activity_settle(p_id uuid)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    UPDATE live_activities a
       SET status = 'dismissed', ended_at = now(), updated_at = now(), version = a.version + 1
     WHERE a.id = p_id AND a.status = 'active'
       AND NOT EXISTS (SELECT 1 FROM live_activity_targets t
                        WHERE t.activity_id = p_id AND (t.device_state IS NULL
                                OR t.device_state IN ('active', 'stale', 'not_promoted')));
    RETURN FOUND;
END
$$;
