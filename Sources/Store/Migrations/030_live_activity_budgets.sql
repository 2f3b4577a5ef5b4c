-- Live Activity budgets shared by every mini-app of the host app, and priorities that serve the user.
-- Apple budgets push-to-start and priority-10 pushes per app and device, and APNs answers 200
-- to a push it then throttles: the gateway keeps its own budget, before Apple's, for all partners at once.
--
-- - Active activities per user, across mini-apps, and starts per user and per (user, mini-app) per hour
--   are counted from `live_activities` itself: every start, a replacement included, is a row whose
--   `created_at` is the start, and nothing deletes a row within the hour (retention waits 7 days after
--   the end). herald_activity_start counts and inserts under one advisory lock on the user, so starts
--   for one user from any number of intake processes are decided one at a time.
-- - Priority-10 pushes per activity per hour are the activity's own `alerted_at`: the times of those of
--   the last hour, kept and trimmed under the activity's row lock (herald_activity_alert_spend).

ALTER TABLE live_activities
    -- iOS `relevance-score` of starts and updates (0-100): the activity with the highest is the one in
    -- the Dynamic Island, and the Lock Screen orders by it.
    ADD COLUMN relevance_score smallint NOT NULL DEFAULT 50 CHECK (relevance_score BETWEEN 0 AND 100),
    -- When the activity's priority-10 pushes after its start were queued, within the last hour.
    ADD COLUMN alerted_at timestamptz[] NOT NULL DEFAULT '{}',
    -- apns-priority of the stored end: 5 for the TTL's end, the partner's (10 with an alert) once it
    -- ended, 10 for a replaced activity's; a late update token sends the held end with it.
    ADD COLUMN apns_end_priority smallint NOT NULL DEFAULT 5;

-- A user's starts of the last hour (the start budgets), newest last.
CREATE INDEX live_activities_user_starts ON live_activities (user_id, created_at);

-- New signatures (the budgets, the relevance score, the silent variant of an alerted update): the old
-- ones are dropped, the new definitions are in sql/functions/activity_start.sql and activity_update.sql.
DROP FUNCTION IF EXISTS herald_activity_start(uuid, text, text, text, uuid, timestamptz, text, text, text, jsonb,
    jsonb, jsonb,
                                    timestamptz, bigint, text, text, bigint, text[], text[], text[], text, text, uuid,
                                    text, text, bigint);
DROP FUNCTION IF EXISTS herald_activity_update(uuid, text, text, text, uuid, integer, timestamptz, jsonb,
    timestamptz, bigint,
                                     text, text, text, text, smallint, text, text, bigint);
