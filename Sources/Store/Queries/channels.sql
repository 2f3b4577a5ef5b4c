-- name: find
-- parameters: id UUID, partnerID UUID
-- returns: ChannelRecord
-- A partner's channel: $1 id, $2 partner; a primary-key probe, another partner's id finds nothing.
SELECT id, partner_id, mini_app_id, template, attributes::text AS attributes_json, state::text AS state_json, status,
       apns_channel_id, version, sent_version, last_timestamp, relevance_score, created_at, updated_at, expires_at,
       ended_at, failure, broadcasts
  FROM live_channels WHERE id = $1 AND partner_id = $2;

-- name: followable
-- parameters: miniAppID String, limit Int
-- returns: ChannelStore.FollowableChannel
-- The open channels of a mini-app ($1), oldest first, at most $2, by the mini-app's index, with their partner's
-- display name.
SELECT c.id, c.partner_id, c.mini_app_id, c.template, c.attributes::text AS attributes_json, c.state::text AS state_json,
       c.status, c.apns_channel_id, c.version, c.sent_version, c.last_timestamp, c.relevance_score, c.created_at,
       c.updated_at, c.expires_at, c.ended_at, c.failure, c.broadcasts, p.display_name
  FROM live_channels c JOIN partners p ON p.id = c.partner_id
 WHERE c.mini_app_id = $1 AND c.status = 'open' AND c.apns_channel_id IS NOT NULL
 ORDER BY c.created_at LIMIT $2;

-- name: events
-- parameters: channelID UUID, limit Int
-- returns: ChannelEventRecord
-- A channel's ($1) audit rows, newest first, at most $2, by the channel's index.
SELECT id, kind, created_at, state::text AS state_json, alert_title, ttl_seconds, dismiss_at, idempotency_key, outcome,
       reason, finished_at
  FROM live_channel_events WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2;

-- name: open
-- Opens a channel (functions/channel_open.sql says what each parameter is); `result` is a ChannelOpenResult.
SELECT herald_channel_open($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13::smallint,
                           $14, $15, $16) AS result;

-- name: change
-- Updates or ends a channel (functions/channel_change.sql); `result` is an ActivityWriteResult.
SELECT herald_channel_change($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12::smallint, $13, $14,
                             $15::smallint, $16, $17::jsonb, $18, $19, $20, $21, $22, $23) AS result;
