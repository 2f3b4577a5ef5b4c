-- The statements of `heraldctl replay` (ReplayStore).

-- name: partnerIDs
-- parameters: miniAppID String
-- returns: ReplayStore.PartnerID
-- The partner ids of mini-app $1, revoked ones too (their deliveries are still in history).
SELECT id FROM partners WHERE mini_app_id = $1 ORDER BY created_at;

-- name: customPlans
-- returns: NoRow
-- Plans this transaction's statements for the values given (SET LOCAL plan_cache_mode): a generic plan of a
-- replay batch's optional selectors would read every partition.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true) AS plan_cache_mode;

-- fragment: picked
-- One batch of the selection, in finish order: $1 outcomes, $2/$3 the last (finished_at, id) of the previous
-- batch, $4 batch size, then the selectors $5 request ids, $6 partner ids, $7 since (inclusive), $8 until
-- (exclusive), $9 reason, each NULL when not given. Planned for the values given (customPlans), a NULL selector's
-- condition folds away, so each combination reads the index that serves it (delivery_history_request,
-- _replayable_partner, _replayable).
SELECT h.id, h.finished_at, h.request_id, h.request_created_at, h.partner_id, h.service, h.user_id,
       h.device_id, h.payload, h.replayed_at, h.collapse_id
  FROM delivery_history h
 WHERE h.outcome = ANY ($1::text[]) AND h.activity_event IS NULL AND h.payload IS NOT NULL
   AND (h.finished_at, h.id) > ($2::timestamptz, $3::uuid)
   AND ($5::uuid[] IS NULL OR h.request_id = ANY ($5::uuid[]))
   AND ($6::uuid[] IS NULL OR h.partner_id = ANY ($6::uuid[]))
   AND ($7::timestamptz IS NULL OR h.finished_at >= $7::timestamptz)
   AND ($8::timestamptz IS NULL OR h.finished_at < $8::timestamptz)
   AND ($9::text IS NULL OR h.last_error = $9::text)
 ORDER BY h.finished_at, h.id
 LIMIT $4

-- fragment: judged
judged AS (
    SELECT p.*, v.environment, r.ttl_seconds,
           CASE
               -- Queued again already. A finished id re-enters the outbox only through a replay,
               -- which marks the row in the same statement: the mark alone says it (in the outbox,
               -- or sent under this id since), with no probe of the outbox or of every history
               -- partition per row. The lock of `batch` makes a concurrent replay see the mark.
               WHEN p.replayed_at IS NOT NULL THEN 'already_replayed'
               WHEN EXISTS (SELECT 1 FROM partners pr WHERE pr.id = p.partner_id AND pr.revoked_at IS NOT NULL)
                   THEN 'partner_revoked'
               -- The partner took the push back (Migrations/functions/push_retract.sql).
               WHEN r.retracted_at IS NOT NULL THEN 'retracted'
               WHEN v.device_id IS NULL THEN 'device_removed'
               WHEN p.service = 'apns' AND (v.apns_token IS NULL OR v.apns_token_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN p.service = 'fcm' AND (v.fcm_token IS NULL OR v.fcm_token_invalidated_at IS NOT NULL)
                   THEN 'token_invalid'
               WHEN EXISTS (SELECT 1 FROM opt_outs o JOIN partners pa ON pa.mini_app_id = o.mini_app_id
                             WHERE pa.id = p.partner_id AND o.user_id = p.user_id) THEN 'opted_out'
               ELSE 'replay'
           END AS verdict
      FROM picked p
      -- The request's audit row, which the replay counts on again. Retention may have dropped it
      -- (requests are partitioned by creation, history by finish): such a row is replayed all the
      -- same, with the fallback TTL, and counted nowhere.
      LEFT JOIN push_requests r ON r.id = p.request_id AND r.created_at = p.request_created_at
      LEFT JOIN devices v ON v.user_id = p.user_id AND v.device_id = p.device_id
)

-- fragment: lastPicked
(SELECT p.finished_at FROM picked p ORDER BY p.finished_at DESC, p.id DESC LIMIT 1) AS last_finished_at,
       (SELECT p.id FROM picked p ORDER BY p.finished_at DESC, p.id DESC LIMIT 1) AS last_id

-- name: judge
-- A dry run of one batch (`picked`): what `batch` would do, changing nothing.
-- parameters: outcomes [String], afterFinished Date, afterID UUID, limit Int
-- parameters: requestIDs [UUID]?, partnerIDs [UUID]?, since Date?, until Date?, reason String?
-- returns: ReplayBatch
WITH picked AS (
    {{picked}}
), {{judged}}
SELECT (SELECT count(*) FROM picked) AS matched, count(*) FILTER (WHERE verdict = 'replay') AS replayed,
       count(*) FILTER (WHERE verdict = 'token_invalid') AS token_invalid,
       count(*) FILTER (WHERE verdict = 'opted_out') AS opted_out,
       count(*) FILTER (WHERE verdict = 'device_removed') AS device_removed,
       count(*) FILTER (WHERE verdict = 'already_replayed') AS already_replayed,
       count(*) FILTER (WHERE verdict = 'partner_revoked') AS partner_revoked,
       count(*) FILTER (WHERE verdict = 'retracted') AS retracted,
       {{lastPicked}}
  FROM judged;

-- name: batch
-- Replays one batch (`picked`, its history rows locked, so a concurrent replay of them waits and then finds them
-- marked): $10 the lane of the new rows, $11 the TTL of a row whose request has none.
-- parameters: outcomes [String], afterFinished Date, afterID UUID, limit Int
-- parameters: requestIDs [UUID]?, partnerIDs [UUID]?, since Date?, until Date?, reason String?
-- parameters: lane Int, fallbackTTLSeconds Int
-- returns: ReplayBatch
WITH picked AS (
    {{picked}}
       FOR UPDATE OF h
), {{judged}}, queued AS (
    -- By the outbox's one writer (sql/functions/outbox_write.sql), each row its own request: the device's
    -- environment now (the payload is the same for both), due now with a fresh TTL, outside the host's
    -- guards, with its collapse id (so it replaces, on the device, what its push replaced); an id already in the
    -- outbox is skipped.
    SELECT w.r_id AS id, w.r_request AS request_id, w.r_request_created AS request_created_at
      FROM (SELECT array_agg(j.request_id) AS requests, array_agg(j.request_created_at) AS created,
                   array_agg(j.partner_id) AS partners, array_agg(now()) AS due,
                   array_agg(coalesce(j.ttl_seconds, $11)) AS ttl, array_agg(j.id) AS ids,
                   array_agg(j.service) AS services, array_agg(j.user_id) AS users,
                   array_agg(j.device_id) AS devices, array_agg(j.environment) AS environments,
                   array_agg(j.payload) AS payloads,
                   CASE WHEN bool_or(j.collapse_id IS NOT NULL) THEN array_agg(j.collapse_id) END AS collapses
              FROM judged j WHERE j.verdict = 'replay') r
     CROSS JOIN LATERAL herald_outbox_write($10, r.requests, r.created, r.partners, r.due, r.ttl, NULL, NULL,
                                            r.ids, r.services, r.users, r.devices, r.environments,
                                            r.payloads, p_collapse => r.collapses) w
), marked AS (
    UPDATE delivery_history h SET replayed_at = now()
      FROM queued q JOIN judged j ON j.id = q.id
     WHERE h.id = j.id AND h.finished_at = j.finished_at
), counts AS (
    SELECT request_id, request_created_at, count(*) AS n FROM queued GROUP BY request_id, request_created_at
), locked AS (
    -- In id order, as the worker's completion takes them: no deadlock with a worker finishing rows
    -- of the same requests.
    SELECT r.id, r.created_at FROM push_requests r JOIN counts c
        ON r.id = c.request_id AND r.created_at = c.request_created_at
     ORDER BY r.id FOR UPDATE OF r
), rollup AS (
    -- The replayed rows are pending again: out of `failed`, so the request is `sending` until
    -- their new outcome counts.
    UPDATE push_requests r SET failed = greatest(r.failed - c.n, 0)
      FROM counts c JOIN locked l ON l.id = c.request_id AND l.created_at = c.request_created_at
     WHERE r.id = c.request_id AND r.created_at = c.request_created_at
)
SELECT (SELECT count(*) FROM picked) AS matched, (SELECT count(*) FROM queued) AS replayed,
       count(*) FILTER (WHERE verdict = 'token_invalid') AS token_invalid,
       count(*) FILTER (WHERE verdict = 'opted_out') AS opted_out,
       count(*) FILTER (WHERE verdict = 'device_removed') AS device_removed,
       -- A row judged 'replay' whose id another row of this batch took first is already replayed.
       (SELECT count(*) FROM picked) - (SELECT count(*) FROM queued)
         - count(*) FILTER (WHERE verdict IN ('token_invalid', 'opted_out', 'device_removed',
                                              'partner_revoked', 'retracted')) AS already_replayed,
       count(*) FILTER (WHERE verdict = 'partner_revoked') AS partner_revoked,
       count(*) FILTER (WHERE verdict = 'retracted') AS retracted,
       {{lastPicked}}
  FROM judged;
