-- name: lastHour
-- returns: ConsoleStore.MinuteOutcome
-- Deliveries finished in the last hour, by minute (0 the current one, 59 the oldest) and outcome (a sent group row
-- counts its members). The BRIN index on finished_at (Migrations/010_operations.sql) keeps the scan to the last
-- hour's block ranges.
SELECT least(floor(extract(epoch FROM now() - finished_at) / 60), 59)::int8 AS minutes_ago, outcome,
       sum(coalesce(cardinality(members), 1))::int8 AS deliveries
  FROM delivery_history
 WHERE finished_at > now() - interval '1 hour'
 GROUP BY 1, 2;

-- name: failures
-- parameters: since Date, limit Int
-- returns: FailureGroup
-- Unreplayed failed, dead or expired deliveries finished since $1, by mini-app, outcome and reason, largest groups
-- first; $2 limit. By the replayable partial index delivery_history_replayable (finished_at).
SELECT p.mini_app_id, h.outcome, h.last_error, count(*)::int8 AS deliveries, min(h.finished_at) AS first_at,
       max(h.finished_at) AS last_at
  FROM delivery_history h JOIN partners p ON p.id = h.partner_id
 WHERE h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
   AND h.finished_at >= $1 AND h.replayed_at IS NULL
 GROUP BY 1, 2, 3
 ORDER BY 4 DESC, 1, 2, 3
 LIMIT $2;

-- name: failuresOfPartner
-- parameters: since Date, limit Int, miniAppID String
-- returns: FailureGroup
-- `failures` of one mini-app: $1 since, $2 limit, $3 the mini-app, every partner row of it (a revoked one and its
-- successor), by delivery_history_replayable_partner (partner_id, finished_at).
SELECT p.mini_app_id, h.outcome, h.last_error, count(*)::int8 AS deliveries, min(h.finished_at) AS first_at,
       max(h.finished_at) AS last_at
  FROM delivery_history h JOIN partners p ON p.id = h.partner_id
 WHERE h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
   AND h.finished_at >= $1 AND h.replayed_at IS NULL
   AND h.partner_id = ANY (ARRAY(SELECT id FROM partners WHERE mini_app_id = $3))
 GROUP BY 1, 2, 3
 ORDER BY 4 DESC, 1, 2, 3
 LIMIT $2;

-- name: requestDeliveries
-- parameters: requestID UUID, createdAt Date, limit Int
-- returns: RequestDelivery
-- The finished deliveries of a request: every failed, dead or expired one, and the others finished within an hour
-- of the request's creation (no index by request holds the sent rows). $1 request id, $2 its creation time,
-- $3 limit. Failures by delivery_history_request (partial, replayable outcomes); the rest by the BRIN on
-- finished_at within the request's first hour.
SELECT * FROM (
    SELECT h.id, h.service, h.device_id, h.outcome, h.last_error, h.attempts,
           coalesce(cardinality(h.members), 1)::int8 AS members, h.finished_at, h.replayed_at IS NOT NULL AS replayed
      FROM delivery_history h
     WHERE h.request_id = $1 AND h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL
    UNION ALL
    SELECT h.id, h.service, h.device_id, h.outcome, h.last_error, h.attempts,
           coalesce(cardinality(h.members), 1)::int8 AS members, h.finished_at, false AS replayed
      FROM delivery_history h
     WHERE h.request_id = $1 AND h.finished_at >= $2::timestamptz
       AND h.finished_at < $2::timestamptz + interval '1 hour'
       AND NOT (h.outcome IN ('failed', 'dead', 'expired') AND h.activity_event IS NULL)
) d
 ORDER BY d.finished_at, d.id
 LIMIT $3;

-- name: partnerUsage
-- returns: Store.PartnerUsage
-- Per live partner: the rate windows' sums (Migrations/functions/rate_counts.sql, as the intake reads them) and its
-- webhook events failed in the last day (webhook_events_failed (partner_id, finished_at)), with the last error.
SELECT p.id, c.minute_count::int8 AS minute_count, c.day_count::int8 AS day_count,
       (SELECT count(*) FROM webhook_events w
         WHERE w.partner_id = p.id AND w.state = 'failed' AND w.finished_at > now() - interval '1 day')::int8
           AS webhook_failed_day,
       (SELECT w.last_error FROM webhook_events w
         WHERE w.partner_id = p.id AND w.state = 'failed' AND w.finished_at > now() - interval '1 day'
         ORDER BY w.finished_at DESC LIMIT 1) AS webhook_last_error
  FROM partners p
 CROSS JOIN LATERAL herald_rate_counts(p.id, floor(extract(epoch FROM now()))::bigint) c
 WHERE p.revoked_at IS NULL;

-- name: partnerEngagement
-- parameters: since Date, sinceID UUID
-- returns: Store.PartnerEngagement
-- Per live partner, its pushes accepted since $1 ($2: the smallest UUIDv7 id of that time): deliveries sent, and
-- those the host's app reported received and opened (the audit rows' counters, sql/061_delivery_events.sql). The
-- index push_requests_mini_app (mini_app_id, id) ranges over the window's ids; $1 prunes the older months.
SELECT p.id, coalesce(sum(r.sent), 0)::int8 AS sent, coalesce(sum(r.received), 0)::int8 AS received,
       coalesce(sum(r.opened), 0)::int8 AS opened
  FROM partners p
  LEFT JOIN push_requests r ON r.mini_app_id = p.mini_app_id AND r.id >= $2 AND r.created_at >= $1
 WHERE p.revoked_at IS NULL
 GROUP BY p.id;

-- name: activityCounts
-- returns: Store.ActivityCounts
-- Live Activities active now, by mini-app, and their device targets holding an event back. Active activities only
-- (at most the TTL's 8 hours of them), by live_activities_due's predicate; their targets by key.
SELECT a.mini_app_id, count(DISTINCT a.id)::int8 AS active,
       count(t.activity_id) FILTER (WHERE t.held_event IS NOT NULL)::int8 AS held
  FROM live_activities a LEFT JOIN live_activity_targets t ON t.activity_id = a.id
 WHERE a.status = 'active'
 GROUP BY 1
 ORDER BY 1;

-- name: failedWebhooks
-- parameters: since Date, limit Int
-- returns: FailedWebhookEvent
-- Webhook events that failed for good since $1, newest first; $2 limit.
-- By webhook_events_finished (finished_at) WHERE state IN ('delivered', 'failed').
SELECT e.id, p.mini_app_id, e.type, e.subject_id, e.attempts, e.last_status, e.last_error, e.finished_at
  FROM webhook_events e JOIN partners p ON p.id = e.partner_id
 WHERE e.state IN ('delivered', 'failed') AND e.state = 'failed' AND e.finished_at >= $1
 ORDER BY e.finished_at DESC
 LIMIT $2;

-- name: requests
-- Audit rows, newest first: $1 an id and $2 its creation (from a UUIDv7 id), $3 a mini-app, $4 since (inclusive),
-- $5 until (exclusive), each NULL when not searched for, $6 the limit. Unprepared: planned for each search's
-- values, a NULL condition folds away, so each combination reads its index: by id the primary key (in one
-- partition when $2 is given), by mini-app push_requests_mini_app (mini_app_id, id), otherwise the primary key
-- backwards (UUIDv7 ids sort by creation). Each row's `held` is one probe of deliveries_held_request.
-- unprepared
-- parameters: id UUID?, createdAt Date?, miniAppID String?, since Date?, until Date?, limit Int
-- returns: RequestSummary
SELECT p.id, p.created_at, p.mini_app_id, p.title, p.lane, p.recipients, p.deliveries, p.suppressed,
       p.suppressed_deliveries, p.sent, p.failed, p.superseded, p.cancelled, {{push_requests.held}} AS held
  FROM push_requests p
 WHERE ($1::uuid IS NULL OR id = $1::uuid)
   AND ($2::timestamptz IS NULL OR created_at = $2::timestamptz)
   AND ($3::text IS NULL OR mini_app_id = $3::text)
   AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz)
   AND ($5::timestamptz IS NULL OR created_at < $5::timestamptz)
 ORDER BY id DESC
 LIMIT $6;
