-- The statements of the push endpoint (PushStore): its admission, its one write, and its audit rows.

-- name: resolve
-- parameters: tenantID String, emails [String], wallets [String], miniAppID String
-- returns: ResolutionLine
-- A push's recipients as one line of the batch resolver (sql/functions/resolve_lines.sql, whose query Postgres
-- inlines here): identifiers, users with opt-out state and locale (one probe of the users' primary key per user,
-- which a push with localized variants renders each user's deliveries in), and live devices. $1 tenant, $2 emails,
-- $3 wallets, $4 mini-app.
SELECT r.kind, r.ident, r.user_id, r.service, r.environment, r.opted_out,
       CASE WHEN r.kind = 'u' THEN (SELECT u.locale FROM users u WHERE u.id = r.user_id) END AS locale
  FROM herald_resolve_lines(ARRAY[$1::text], ARRAY[$4::text], array_fill(1, ARRAY[cardinality($2::text[])]),
                            $2::text[], array_fill(1, ARRAY[cardinality($3::text[])]), $3::text[]) AS r;

-- name: reserveRate
-- parameters: partnerID UUID, perMinute Int, perDay Int
-- returns: RateReservation
-- One rate-limit reservation (sql/functions/rate_reserve.sql): $1 partner, $2 per minute, $3 per day.
SELECT * FROM herald_rate_reserve($1, $2, $3);

-- name: refundRate
-- parameters: partnerID UUID, seconds Int
-- Gives back the reservation a stored answer did not use: $1 partner, $2 the reservation's second.
SELECT herald_rate_refund($1, $2);

-- name: findIdempotentResponse
-- parameters: partnerID UUID, key String, now Date
-- returns: IdempotentResponse
-- The stored response of a key used in the 24 hours before now: $1 partner, $2 key, $3 now.
-- The (partner, key) primary key.
SELECT body_hash, response, status FROM idempotency_keys
 WHERE partner_id = $1 AND key = $2 AND created_at > $3::timestamptz - interval '24 hours';

-- name: enqueue
-- The whole accepted push in one statement (PushStore.enqueue): the idempotency key, the audit row, the senders
-- and the deliveries by the outbox's one writer (sql/functions/outbox_write.sql): 16 or more to one (service,
-- environment) are written as group rows of at most 50, of even sizes (sql/016_delivery_groups.sql); fewer, or a
-- group of one, as single rows. It runs once for the row of `go` (LATERAL), so nothing is written when the key is
-- another request's. $1 partner, $2 key, $3 body hash, $4 request, $5 response, $6 created at, $7 mini-app,
-- $8 title, $9 body, $10 deep link, $11 data, $12 send at, $13 TTL, $14 lane, $15 recipients, $16 suppressed,
-- $17 missing, $18 senders, $19..$24 the deliveries' ids, services, users, devices, environments and payloads,
-- $25 interruption level, $26 collapse key (its id derived by functions/collapse_id.sql). `written` is 1 when the
-- push was written.
WITH idem AS (
    INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
    SELECT $1, $2, $3, $4, $5, $6 WHERE $2::text IS NOT NULL
    ON CONFLICT (partner_id, key) DO UPDATE
       SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
           response = EXCLUDED.response, created_at = EXCLUDED.created_at
     WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours'
    RETURNING 1
), go AS (
    SELECT $14::integer AS lane WHERE $2::text IS NULL OR EXISTS (SELECT 1 FROM idem)
), audit AS (
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
        deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed,
        missing, collapse_key)
    SELECT $4, $6, $1, $7, $2, $8, $9, $10, $11::jsonb, $12, $13,
           herald_push_expiry(coalesce($12::timestamptz, $6::timestamptz), $13::integer), go.lane, $15,
           cardinality($19::uuid[]), $16, $17::jsonb, $26::text
      FROM go
    RETURNING 1
), senders AS (
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    SELECT u, $7, $6 FROM go, unnest($18::text[]) AS u
    ON CONFLICT DO NOTHING
), outbox AS (
    SELECT w.r_id
      FROM go CROSS JOIN LATERAL herald_outbox_write(
               go.lane, ARRAY[$4::uuid], ARRAY[$6::timestamptz], ARRAY[$1::uuid],
               ARRAY[coalesce($12::timestamptz, $6::timestamptz)], ARRAY[$13::integer], ARRAY[$25::text],
               array_fill(1, ARRAY[cardinality($19::uuid[])]), $19::uuid[], $20::text[], $21::text[],
               $22::text[], $23::text[], $24::text[], p_group_from => 16,
               p_collapse => CASE WHEN $26::text IS NOT NULL THEN ARRAY[herald_collapse_id($7, $26)] END) AS w
)
SELECT (SELECT count(*) FROM audit) AS written, (SELECT count(*) FROM outbox) AS deliveries;

-- fragment: held
-- The rows of request `p` held for their user's quiet hours: a count in the partial index deliveries_held_request
-- (sql/052_user_guards_visible.sql), which holds only held rows, so a request with none costs one probe. A held
-- row is always a single row: a group's held member is split off. The console's request search reads it too.
(SELECT count(*) FROM deliveries d
  WHERE d.request_id = p.id AND d.last_error = 'quiet_hours' AND d.state = 'pending')

-- fragment: summaryColumns
p.id, p.partner_id, p.created_at, p.recipients, p.deliveries, p.suppressed, p.suppressed_deliveries,
       p.sent, p.failed, p.superseded, p.cancelled, p.retracted, p.retracted_at, {{held}} AS held, p.send_at,
       p.missing::text AS missing_json, p.received, p.opened, p.dismissed

-- name: find
-- parameters: requestID UUID, from Date, to Date
-- returns: PushRequestSummary
-- One audit row by its primary key, in one partition: $1 id, $2 and $3 the millisecond of its creation (from the
-- UUIDv7 id). `held` counts the request's rows held for quiet hours in the partial index deliveries_held_request
-- (sql/052_user_guards_visible.sql), which holds only held rows, so a request with none costs one probe.
SELECT {{summaryColumns}}
  FROM push_requests p WHERE p.id = $1 AND p.created_at >= $2 AND p.created_at < $3;

-- name: summaries
-- parameters: ids [UUID], createdAt [Date]
-- returns: PushRequestSummary
-- Several audit rows: $1 ids, $2 their creation times (same order); each pair finds its row by the primary key,
-- in its partition. `held` as in `find`.
SELECT {{summaryColumns}}
  FROM unnest($1::uuid[], $2::timestamptz[]) AS w(id, created_at)
  JOIN push_requests p ON p.id = w.id AND p.created_at = w.created_at;

-- name: retract
-- parameters: requestID UUID, from Date, to Date, partnerID UUID, retractionID UUID
-- returns: PushRetractionLine
-- A partner's retraction of its push (Migrations/functions/push_retract.sql): $1 the request, $2 and $3 the
-- millisecond of its creation (as `find`), $4 the partner it must belong to, $5 the id the messages' rows carry as
-- their request. No row: no such request of this partner's.
SELECT first_time, retracted_at, expires_at, cancelled, retracted, delivery_id, service, user_id, device_id,
       environment, due_at
  FROM herald_push_retract($1, $2, $3, $4, $5);

-- name: writeRetractMessages
-- parameters: retractionID UUID, createdAt Date, partnerID UUID, ids [UUID], services [String], users [String]
-- parameters: devices [String], environments [String], payloads [String], due [Date], ttlSeconds [Int]
-- returns: PushStore.Written
-- The retraction's messages, by the outbox's one writer (Migrations/functions/outbox_write.sql), in the realtime
-- lane at apns-priority 5: one row each, under the retraction's id ($1, created $2, of partner $3), due at $10 and
-- expiring $11 seconds after. `written` counts the rows written.
SELECT count(*)::integer AS written
  FROM herald_outbox_write(
           0, array_fill($1::uuid, ARRAY[cardinality($4::uuid[])]),
           array_fill($2::timestamptz, ARRAY[cardinality($4::uuid[])]),
           array_fill($3::uuid, ARRAY[cardinality($4::uuid[])]), $10::timestamptz[], $11::integer[],
           array_fill(NULL::text, ARRAY[cardinality($4::uuid[])]), NULL, $4::uuid[], $5::text[], $6::text[],
           $7::text[], $8::text[], $9::text[],
           p_priority => array_fill(5::smallint, ARRAY[cardinality($4::uuid[])]));
