-- name: audience
-- parameters: tenantID String, email String?, wallet String?, miniAppID String, sessionSince Date, template String
-- returns: ActivityAudience
-- Whom a start reaches: $1 tenant, $2 email, $3 wallet, $4 mini-app, $5 oldest session that counts, $6 template
-- (functions/activity_audience.sql).
SELECT user_id, has_session, opted_out, devices, old_id, old_template, old_attributes, old_state,
       old_last_timestamp, old_created_at, old_expires_at
  FROM herald_activity_audience($1, $2, $3, $4, $5, $6);

-- name: find
-- parameters: id UUID, partnerID UUID
-- returns: ActivityRecord
-- A partner's activity: $1 id, $2 partner; a primary-key probe, another partner's id finds nothing.
SELECT id, partner_id, mini_app_id, template, attributes::text AS attributes_json, state::text AS state_json,
       start_alert::text AS start_alert_json, status, version, last_timestamp, created_at, updated_at, expires_at,
       ended_at, dismiss_at, relevance_score, channel_id, user_id, start_at, start_refusal
  FROM live_activities WHERE id = $1 AND partner_id = $2;

-- name: start
-- Starts an activity (functions/activity_start.sql says what each parameter is).
SELECT result, reason AS refusal, retry_after, replaced_priority
  FROM herald_activity_start($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb,
                             $13, $14, $15, $16, $17, $18::text[], $19::text[], $20, $21,
                             $22, $23, $24, $25, $26::smallint, $27, $28, $29, $30, $31, $32,
                             $33::uuid);

-- name: schedule
-- Holds a start with startAt (functions/activity_schedule.sql says what each parameter is); `result` is an
-- ActivityWriteResult.
SELECT herald_activity_schedule($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb, $13, $14,
                                $15, $16, $17, $18, $19::text[], $20::text[], $21, $22, $23::smallint, $24, $25, $26,
                                $27, $28, $29, $30) AS result;

-- name: cancel
-- Cancels a scheduled start (functions/activity_cancel.sql): $1 partner, $2 key, $3 body hash, $4 response, $5
-- activity, $6 version read; `result` is an ActivityWriteResult.
SELECT herald_activity_cancel($1, $2, $3, $4, $5, $6, $7) AS result;

-- name: startDue
-- parameters: now Date, limit Int
-- returns: ScheduledStartSweep
-- One batch of the sweep of scheduled starts: $1 the worker's time, $2 batch size
-- (functions/activity_start_due.sql).
SELECT started, refused FROM herald_activity_start_due($1, $2);

-- name: update
-- Updates an activity (functions/activity_update.sql); `result` is an ActivityWriteResult.
SELECT herald_activity_update($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13, $14,
                              $15::smallint, $16, $17, $18, $19::smallint, $20, $21, $22, $23, $24::jsonb, $25,
                              $26) AS result;

-- name: end
-- Ends an activity (functions/activity_end.sql); `result` is an ActivityWriteResult.
SELECT herald_activity_end($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12, $13::smallint, $14, $15)
    AS result;

-- name: deviceState
-- parameters: activityID UUID, deviceID String, state String
-- returns: WriteResultRow
-- The host's word on an activity ($1) on a device ($2): $3 state (functions/activity_device_state.sql); `result`
-- is the activity's status afterwards, or not_found.
SELECT herald_activity_device_state($1, $2, $3) AS result;

-- name: devices
-- parameters: activityID UUID
-- returns: ActivityDeviceView
-- An activity's ($1) devices and what is known of each (ActivityDeviceView.state), by the primary key.
SELECT t.device_id, CASE t.service WHEN 'apns' THEN 'ios' ELSE 'android' END AS platform,
       CASE WHEN t.device_state IS NOT NULL THEN t.device_state
            WHEN t.start_sent_at IS NULL THEN 'starting'
            WHEN a.channel_id IS NOT NULL THEN 'following'
            WHEN t.service = 'apns' AND t.update_token IS NULL THEN 'awaiting_token'
            ELSE 'active' END AS state
  FROM live_activity_targets t JOIN live_activities a ON a.id = t.activity_id
 WHERE t.activity_id = $1 ORDER BY t.device_id;

-- name: unconfirm
-- parameters: seconds Int, limit Int
-- returns: CountRow
-- One batch of the sweep of iPhones whose start created nothing: $1 seconds since the start reached APNs, $2 batch
-- size (functions/activity_unconfirmed.sql); `count` became unconfirmed.
SELECT herald_activity_unconfirmed($1, $2) AS count;

-- name: token
-- parameters: activityID UUID, deviceID String, token String
-- returns: WriteResultRow
-- The host reports an activity's ($1) update token on a device ($2): $3 token (functions/activity_token.sql).
SELECT herald_activity_token($1, $2, $3) AS result;

-- name: expire
-- parameters: limit Int
-- returns: CountRow
-- One batch of the TTL sweep: $1 batch size (functions/expire_activities.sql); `count` expired.
SELECT herald_expire_activities($1) AS count;

-- fragment: eventColumns
-- An audit row as ActivityEventRecord reads it.
id, kind, created_at, state::text AS state_json, alert_title, ttl_seconds, dismiss_at, idempotency_key,
       devices_apns AS apns_devices, devices_fcm AS fcm_devices, sent, failed, superseded, reason

-- name: events
-- parameters: activityID UUID, partnerID UUID, since Date, limit Int
-- returns: ActivityEventRecord
-- An activity's events newest first, from `live_activity_events_activity` in index order: $1 activity, $2 partner,
-- $3 the activity's creation (partition pruning), $4 limit.
SELECT {{eventColumns}}
  FROM live_activity_events
 WHERE activity_id = $1 AND partner_id = $2 AND created_at >= $3
 ORDER BY created_at DESC, id DESC
 LIMIT $4;

-- name: eventsAfter
-- parameters: activityID UUID, partnerID UUID, since Date, limit Int, cursorCreatedAt Date, cursorID UUID
-- returns: ActivityEventRecord
-- As `events`, from after the cursor ($5 created_at, $6 id): the row comparison is an index bound.
SELECT {{eventColumns}}
  FROM live_activity_events
 WHERE activity_id = $1 AND partner_id = $2 AND created_at >= $3 AND (created_at, id) < ($5, $6)
 ORDER BY created_at DESC, id DESC
 LIMIT $4;
