-- The statements of the reminders endpoints (ReminderStore).

-- fragment: reminderColumns
-- A reminder as ReminderRecord reads it: the pending ones, as those read here are.
r.id, r.mini_app_id, r.title, r.body, r.deep_link, r.at, 'scheduled' AS status, r.created_at

-- name: audience
-- parameters: userID String, miniAppID String
-- returns: ReminderStore.AudienceDevice
-- One row per device of user $1 with a valid token (a row of NULL devices for a user without any), each with the
-- user's tenant and opt-out state for mini-app $2; none when there is no such user. A valid token is what
-- herald_resolve_lines (sql/functions/resolve_lines.sql) counts for a push.
SELECT u.tenant_id,
       EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.id AND o.mini_app_id = $2) AS opted_out,
       d.device_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END AS service, d.environment
  FROM users u
  LEFT JOIN devices d ON d.user_id = u.id
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
 WHERE u.id = $1
 ORDER BY d.device_id;

-- name: schedule
-- The schedule (sql/functions/schedule_reminder.sql); its parameters are ReminderStore.Schedule's.
SELECT outcome, pending, reminder FROM herald_schedule_reminder($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
    $12, $13, $14, $15, $16, $17::uuid[], $18::text[], $19::text[], $20::text[], $21::text[], $22, $23);

-- name: keyed
-- parameters: userID String, key String
-- returns: KeyedReminder
-- The reminder user $1 scheduled with key $2 in the last 24 hours (reminders_idempotency).
SELECT {{reminderColumns}}, r.body_hash
  FROM reminders r
 WHERE r.user_id = $1 AND r.idempotency_key = $2 AND r.created_at > now() - interval '24 hours';

-- name: userExists
-- parameters: userID String
-- Whether user $1 exists.
SELECT EXISTS (SELECT 1 FROM users WHERE id = $1) AS user_exists;

-- name: pending
-- parameters: userID String
-- returns: ReminderRecord
-- User $1's pending reminders, from the scheduled ones (reminders_scheduled), each checked against the outbox
-- (herald_reminder_pending, sql/functions/reminder_pending.sql).
SELECT {{reminderColumns}}
  FROM reminders r
 WHERE r.user_id = $1 AND r.status = 'scheduled' AND herald_reminder_pending(r.deliveries)
 ORDER BY r.at, r.id;

-- name: cancel
-- parameters: reminderID UUID, userID String
-- returns: ReminderStore.CancelOutcome
-- The cancel of reminder $1 of user $2 (sql/functions/cancel_reminder.sql): cancelled, sent or not_found.
SELECT herald_cancel_reminder($1, $2) AS result;
