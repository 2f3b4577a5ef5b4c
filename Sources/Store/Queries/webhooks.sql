-- name: claim
-- Leases due webhook events: $1 worker, $2 limit, $3 per partner, $4 partners with their room $5, $6 lease seconds,
-- $7 now (functions/webhook_claim.sql).
SELECT id, partner_id, body, attempts, window_start, url, secret, previous_secret
  FROM herald_webhook_claim($1, $2, $3, $4::uuid[], $5::integer[], $6, $7);

-- name: record
-- Attempts' outcomes, element by element: $1 worker, $2 events, $3 outcomes, $4 statuses, $5 errors, $6 retry
-- times, $7 now; returns how many events were still the worker's (`count`).
SELECT herald_webhook_record($1, $2::uuid[], $3::text[], $4::integer[], $5::text[], $6::timestamptz[], $7)
    AS count;

-- name: replayable
-- parameters: eventIDs [UUID], partnerIDs [UUID], since Date?, until Date?
-- returns: WebhookStore.ReplayableEvent
-- Failed events matching a replay's selection, locked: $1 event ids, $2 partners (empty arrays: any), $3 failed
-- since, $4 failed before (NULL: open); `replayable` is false for a partner without a webhook.
SELECT e.id, p.webhook_url IS NOT NULL AS replayable
  FROM webhook_events e JOIN partners p ON p.id = e.partner_id
 WHERE e.state = 'failed'
   AND (cardinality($1::uuid[]) = 0 OR e.id = ANY ($1::uuid[]))
   AND (cardinality($2::uuid[]) = 0 OR e.partner_id = ANY ($2::uuid[]))
   AND ($3::timestamptz IS NULL OR e.finished_at >= $3)
   AND ($4::timestamptz IS NULL OR e.finished_at < $4)
   FOR UPDATE OF e;

-- name: replay
-- parameters: ids [UUID], now Date
-- Puts failed events ($1) back in the queue at $2 with a new window and no attempts spent.
UPDATE webhook_events
   SET state = 'pending', available_at = $2, window_start = $2, attempts = 0, finished_at = NULL,
       last_status = NULL, last_error = NULL
 WHERE id = ANY ($1::uuid[]) AND state = 'failed';
