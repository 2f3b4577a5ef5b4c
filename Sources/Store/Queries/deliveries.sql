-- fragment: leasedRows
-- What claimListed and readLeased return of the rows of their CTE `leased`: `claim`'s columns, with its verdicts for
-- a row of its own without an activity.
SELECT d.id, d.service, d.environment, d.payload, d.attempts, d.expires_at,
       CASE WHEN d.service = 'fcm' THEN v.fcm_token ELSE v.apns_token END AS token,
       CASE
           WHEN p.revoked_at IS NOT NULL THEN 'cancelled'
           WHEN d.expires_at IS NOT NULL AND d.expires_at <= now() THEN 'expired'
           WHEN d.superseded_by IS NOT NULL THEN 'superseded'
           WHEN v.device_id IS NULL THEN 'device_removed'
           WHEN d.service = 'fcm' AND (v.fcm_token IS NULL OR v.fcm_token_invalidated_at IS NOT NULL)
               THEN 'token_invalid'
           WHEN d.service = 'apns' AND (v.apns_token IS NULL OR v.apns_token_invalidated_at IS NOT NULL)
               THEN 'token_invalid'
           WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = d.user_id AND o.mini_app_id = p.mini_app_id)
               THEN 'suppressed'
           ELSE 'send'
       END AS verdict,
       d.lane, d.partner_id, d.available_at, v.bundle_id, NULL::text AS activity_event, d.priority,
       NULL::uuid AS group_id, NULL::integer AS member, NULL::timestamptz AS held_until, d.collapse_id
  FROM leased d
  LEFT JOIN partners p ON p.id = d.partner_id
  LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id

-- name: claim
-- The worker's claim: leases due rows by walking the (lane, partner) queues
-- (Migrations/functions/claim_deliveries.sql).
-- $1 worker, $2 limit, $3 lease seconds, $4 services, $5-$7 cursors (lanes, partners, times), $8 the most bulk
-- rows (Migrations/012_claim_bulk_limit.sql), $9 the cap per user and hour (0: none).
SELECT * FROM herald_claim_deliveries($1, $2, $3, $4::text[], $5::smallint[], $6::uuid[], $7::timestamptz[],
                                      $8::integer, $9::integer);

-- name: claimListed
-- parameters: worker String, limit Int, leaseSeconds Int, services [String], listed [UUID], userMaxPerHour Int
-- returns: ClaimedDelivery
-- The listed claim: leases the rows an intake's notification listed
-- (Migrations/functions/intake_push.sql, step 6).
-- $1 worker, $2 limit, $3 lease seconds, $4 services, $5 the listed rows, $6 the cap per user and hour.
-- Those rows are plain pushes just written, so the walk's fairness and an activity's order have nothing to decide:
-- one statement leases those still pending and due, and returns `claim`'s columns with its verdicts for a row of
-- its own without an activity (a group row or a row of an activity is left to the walk). A plain statement, not a
-- branch of herald_claim_deliveries: the function's call (its frame, its SET clauses, its returned rows gathered in
-- a tuplestore) cost more than the statement itself. The claimer's session plans it as the function's SET clauses
-- would (DeliveryStore.workerSession, `claims`).
-- The state is tested as an expression no partial index's predicate matches, and the update tests only the ids
-- (the rows are locked by the subquery and were pending in their latest version): the planner cannot choose a
-- scan of the due index, with its dead entries, instead of a few deliveries_pkey probes.
-- The final SELECT (columns and verdicts of the CTE `leased`) is the fragment leasedRows, shared with readLeased.
WITH leased AS (
    UPDATE deliveries d
       SET state = 'leased', leased_by = $1, attempts = d.attempts + 1,
           lease_expires_at = now() + make_interval(secs => $3::integer)
     WHERE d.id = ANY (ARRAY(SELECT l.id FROM deliveries l
                              WHERE l.id = ANY ($5::uuid[]) AND (l.state || '') = 'pending'
                                AND l.available_at <= now() AND l.service = ANY ($4::text[])
                                AND l.activity_id IS NULL AND l.members IS NULL
                                AND NOT EXISTS (SELECT 1 FROM partners s
                                                 WHERE s.id = l.partner_id AND s.suspended_at IS NOT NULL
                                                   AND s.revoked_at IS NULL)
                                -- The host's guards are judged by the walk's claim (functions/user_guards.sql):
                                -- partner pushes while the cap is on, or to a user with quiet hours.
                                AND (l.interruption_level IS NULL
                                     OR ($6::integer <= 0
                                         AND NOT EXISTS (SELECT 1 FROM users u
                                                          WHERE u.id = l.user_id AND u.quiet_start IS NOT NULL)))
                              ORDER BY l.available_at
                              LIMIT $2
                                FOR UPDATE SKIP LOCKED))
    RETURNING d.id, d.user_id, d.device_id, d.payload, d.service, d.environment, d.attempts, d.expires_at,
              d.lane, d.partner_id, d.available_at, d.priority, d.collapse_id, d.superseded_by)
{{leasedRows}};

-- name: readLeased
-- parameters: worker String, ids [UUID]
-- returns: ClaimedDelivery
-- The rows an intake leased to a worker (Migrations/functions/intake_push.sql), read with claimListed's columns
-- and verdicts.
-- $1 worker, $2 the rows' ids. Those still leased to the worker, by primary key (the state tested as an expression,
-- as in claimListed), and nothing written: the intake's insert was the claim.
-- The final SELECT is the fragment leasedRows, shared with claimListed.
WITH leased AS (
    SELECT d.id, d.user_id, d.device_id, d.payload, d.service, d.environment, d.attempts, d.expires_at,
           d.lane, d.partner_id, d.available_at, d.priority, d.collapse_id, d.superseded_by
      FROM deliveries d
     WHERE d.id = ANY ($2::uuid[]) AND d.leased_by = $1 AND (d.state || '') = 'leased'
       AND d.activity_id IS NULL AND d.members IS NULL)
{{leasedRows}};

-- name: complete
-- parameters: worker String, ids [UUID], outcomes [String], errors [String], retryAt [String],
-- parameters: tokens [String], groups [UUID?]?, members [Int?]?
-- returns: DeliveryStore.CompletionCounts
-- A batch of outcomes recorded in one statement (Migrations/functions/complete_deliveries.sql): how many rows it
-- finished (finished_count) and rescheduled (retried_count).
-- $1 worker, $2 ids, $3 outcomes, $4 errors ('' none), $5 retry times ('' none), $6 tokens ('' none),
-- $7 group rows and $8 positions (NULL elements for rows of their own; NULL when no row is a member).
SELECT * FROM herald_complete_deliveries($1, $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[],
                                         $7::uuid[], $8::integer[]);

-- name: release
-- parameters: worker String, ids [UUID]
-- Leased rows given back, pending at once with the claim's attempt unspent. $1 worker, $2 ids.
-- `leased_by` alone says the row is still leased by this worker (see herald_complete_deliveries for why `state` is
-- not tested). Primary-key probes.
UPDATE deliveries
   SET state = 'pending', leased_by = NULL, lease_expires_at = NULL, attempts = greatest(attempts - 1, 0)
 WHERE id = ANY ($2::uuid[]) AND leased_by = $1;

-- name: releaseLeased
-- parameters: worker String, keeping [UUID]
-- The rows still leased to a worker but for those kept, pending again with their attempts unspent.
-- $1 worker, $2 rows kept. The lease index finds the worker's rows (`release` for the rest).
UPDATE deliveries
   SET state = 'pending', leased_by = NULL, lease_expires_at = NULL, attempts = greatest(attempts - 1, 0)
 WHERE state = 'leased' AND leased_by = $1 AND id <> ALL ($2::uuid[]);

-- name: extendLeases
-- parameters: worker String, ids [UUID], leaseSeconds Int
-- Renews the leases a worker still holds. $1 worker, $2 ids, $3 lease seconds.
-- Primary-key probes; `leased_by` says the row is still ours.
UPDATE deliveries SET lease_expires_at = now() + make_interval(secs => $3)
 WHERE id = ANY ($2::uuid[]) AND leased_by = $1;

-- name: rescue
-- parameters: limit Int
-- Rows whose lease expired back to pending. $1 limit. Served by the partial index deliveries_lease.
UPDATE deliveries SET state = 'pending', leased_by = NULL, lease_expires_at = NULL
 WHERE id IN (SELECT id FROM deliveries
               WHERE state = 'leased' AND lease_expires_at < now()
               ORDER BY lease_expires_at LIMIT $1
                 FOR UPDATE SKIP LOCKED);

-- name: nextAvailable
-- returns: DeliveryStore.NextAvailableAt
-- When the earliest pending row becomes due (NULL when none): the heads of every (lane, partner) queue, from a
-- loose index scan (Migrations/functions/queue_heads.sql).
SELECT min(oldest_available_at) AS next_available_at FROM herald_queue_heads();
