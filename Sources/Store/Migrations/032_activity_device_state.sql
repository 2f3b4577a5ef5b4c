-- The device's own word about a Live Activity: the host reports what ActivityKit's
-- `activityStateUpdates` says on each device (`active`, `dismissed`, `ended`, `stale`), and a push-to-start
-- whose update token never came back is `unconfirmed` (functions/activity_device_state.sql,
-- activity_unconfirmed.sql). An activity the user dismissed or ended on every device is `dismissed` for the
-- partner, and nothing more is sent to it.
ALTER TABLE live_activity_targets
    ADD COLUMN device_state text CHECK (device_state IN ('active', 'dismissed', 'ended', 'stale', 'unconfirmed')),
    ADD COLUMN device_state_at timestamptz,
    -- When the start reached the upstream (functions/complete_deliveries.sql): the wait for the update token
    -- is counted from it, not from the partner's call (a start may wait out retries).
    ADD COLUMN start_sent_at timestamptz;
-- The sweep of starts that created nothing: iPhones still without an update token or word, oldest start first.
CREATE INDEX live_activity_targets_awaiting_token ON live_activity_targets (start_sent_at)
    WHERE service = 'apns' AND update_token IS NULL AND device_state IS NULL AND start_sent_at IS NOT NULL;

ALTER TABLE live_activities DROP CONSTRAINT live_activities_status_check;
ALTER TABLE live_activities ADD CONSTRAINT live_activities_status_check
    CHECK (status IN ('active', 'ended', 'replaced', 'expired', 'dismissed'));

ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_check;
ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_check
    CHECK (type IN ('push.completed', 'activity.ended', 'activity.expired', 'activity.dismissed'));
