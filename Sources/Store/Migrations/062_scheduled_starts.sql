-- Scheduled Live Activity starts (docs/api-live-activities.md, *Scheduled starts*): a start with `startAt` is held
-- as a `scheduled` activity and sent at that time by the workers' activity sweeper
-- (functions/activity_start_due.sql), which checks the session, the opt-out, the user's quiet hours and the start
-- budgets again then. A scheduled start that is never sent ends `cancelled` (the partner's DELETE,
-- functions/activity_cancel.sql) or `refused` (a check failed when it came due; `start_refusal` says which).

-- `start_at`: when a scheduled start is due (kept once sent, for the partner's GET); NULL for a start sent at once.
-- `held_start`: what the due start needs and only the intake could make, dropped once the start is sent or ends:
-- the rendered start payloads (`apns`, `fcm`), the devices the intake found (`devices`, `services`), the limits of
-- the intake that accepted it (`sessionDays`, `maxActive`, `startsPerUser`, `startsPerApp`, `alertedLimit`) and the
-- partner's audit inputs (`key`, `alertTitle`, `ttlSeconds`).
-- `start_refusal`: why a scheduled start was not sent (status `refused`).
ALTER TABLE live_activities
    ADD COLUMN start_at timestamptz,
    ADD COLUMN held_start jsonb,
    ADD COLUMN start_refusal text;

ALTER TABLE live_activities DROP CONSTRAINT live_activities_status_check;
ALTER TABLE live_activities ADD CONSTRAINT live_activities_status_check
    CHECK (status IN ('active', 'ended', 'replaced', 'expired', 'dismissed', 'scheduled', 'cancelled', 'refused'));

-- The sweep's due starts, oldest first; only rows still waiting are in it (a handful beside every activity).
CREATE INDEX live_activities_scheduled ON live_activities (start_at) WHERE status = 'scheduled';

-- The audit of a scheduled start: `schedule` when accepted, `start` when sent, `cancel` (the partner's DELETE) or
-- `refuse` (with `reason`) when it ends unsent.
ALTER TABLE live_activity_events ADD COLUMN reason text;
ALTER TABLE live_activity_events DROP CONSTRAINT live_activity_events_kind_check;
ALTER TABLE live_activity_events ADD CONSTRAINT live_activity_events_kind_check
    CHECK (kind IN ('start', 'update', 'end', 'expire', 'replace-end', 'revoke-end', 'schedule', 'cancel',
                    'refuse'));
