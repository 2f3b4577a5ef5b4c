-- name: report
-- parameters: since Date, until Date
-- returns: TokenReport.Line
-- Token invalidations finished in [$1, $2), by upstream, token kind and reason, with their devices and time span.
-- Only `token_invalid` rows, through their partial index (Migrations/027_token_health.sql).
SELECT service AS upstream,
       CASE WHEN service = 'fcm' THEN 'fcm' WHEN activity_event IS NULL THEN 'apns'
            WHEN activity_event = 'start' THEN 'apnsPushToStart' ELSE 'liveActivity' END AS token,
       coalesce(last_error, 'unknown') AS reason,
       count(*)::int8 AS count, count(DISTINCT (user_id, device_id))::int8 AS devices,
       min(finished_at) AS first, max(finished_at) AS last
  FROM delivery_history
 WHERE outcome = 'token_invalid' AND finished_at >= $1 AND finished_at < $2
 GROUP BY 1, 2, 3
 ORDER BY 4 DESC, 1, 2, 3;
