-- An Android device may report `not_promoted`: it shows the activity as an ordinary notification because the
-- user or the system declined Android 16's promotion to a Live Update. It still shows the activity, so sending
-- continues and it does not count towards `dismissed` (functions/activity_device_state.sql,
-- functions/activity_settle.sql, functions/activity_event.sql).
ALTER TABLE live_activity_targets DROP CONSTRAINT live_activity_targets_device_state_check;
ALTER TABLE live_activity_targets ADD CONSTRAINT live_activity_targets_device_state_check
    CHECK (device_state IN ('active', 'dismissed', 'ended', 'stale', 'unconfirmed', 'not_promoted'));
