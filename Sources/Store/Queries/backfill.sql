-- The statements of `heraldctl backfill` (BackfillStore). Its COPYs into the staging tables are unprepared: a COPY
-- is no statement that can be prepared (PostgresConnection.copy runs it).

-- name: takenKeys
-- parameters: lines [Int], partnerIDs [UUID], keys [String], run UUID
-- returns: BackfillStore.TakenKey
-- The lines whose (partner, key) is written already: $1 lines, $2 partners, $3 keys, $4 this run. `this_run`
-- says whether this run wrote it, `first_line` at which line. By the (partner, key) primary key.
SELECT i.line, b.run_id = $4 AS this_run, b.line AS first_line
  FROM unnest($1::integer[], $2::uuid[], $3::text[]) AS i (line, partner_id, key)
  JOIN backfill_keys b ON b.partner_id = i.partner_id AND b.key = i.key;

-- name: resolveLines
-- parameters: tenants [String], miniApps [String], emailLines [Int], emails [String], walletLines [Int],
-- parameters: wallets [String]
-- returns: BackfillStore.NumberedResolutionLine
-- Each line's recipients (sql/functions/resolve_lines.sql): $1 tenant and $2 mini-app of each line; $4 emails and
-- $6 wallets, each naming its line (1-based) in $3 and $5. Rows name the line by its position. A user's row carries
-- its locale, as the push endpoint's `resolve` does.
SELECT r.line, r.kind, r.ident, r.user_id, r.service, r.environment, r.opted_out,
       CASE WHEN r.kind = 'u' THEN (SELECT u.locale FROM users u WHERE u.id = r.user_id) END AS locale
  FROM herald_resolve_lines($1::text[], $2::text[], $3::integer[], $4::text[], $5::integer[], $6::text[]) AS r;

-- name: stage
-- returns: NoRow
-- The session's staging tables (sql/011_backfill.sql).
SELECT herald_backfill_stage();

-- name: apply
-- parameters: run UUID
-- returns: BackfillStore.AppliedLine
-- Writes the staged batch of run $1: one row per line (line, outcome, first line of a repeated key).
SELECT line, outcome, first_line FROM herald_backfill_apply($1);

-- name: putUsers
-- Upserts a batch of users and their devices, each line in its own subtransaction
-- (sql/functions/backfill_users.sql); one row per line: its outcome, whether the user was created, its devices.
SELECT line, outcome, created, devices FROM herald_backfill_users($1::integer[], $2::text[], $3::text[],
    $4::integer[], $5::integer[], $6::text[], $7::integer[], $8::integer[], $9::text[], $10::integer[],
    $11::integer[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[],
    $19::text[], $20::boolean[], $21::text[], $22::time[], $23::time[]);

-- name: copyLines
-- The run's lines into the session's staging table (sql/011_backfill.sql), one row each.
-- unprepared
COPY herald_backfill_lines (line, partner_id, key, request_id, created_at, mini_app_id, title, body, deep_link,
    data, send_at, ttl_seconds, recipients, suppressed, missing, deliveries, collapse_key) FROM STDIN;

-- name: copyDeliveries
-- The lines' deliveries into the session's staging table.
-- unprepared
COPY herald_backfill_deliveries (request_id, id, service, user_id, device_id, environment, payload) FROM STDIN;

-- name: copySenders
-- The lines' senders into the session's staging table.
-- unprepared
COPY herald_backfill_senders (request_id, user_id) FROM STDIN;
