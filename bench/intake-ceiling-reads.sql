-- pgbench script for bench/intake: the three statements the intake runs per push BEFORE the
-- write, each in its own transaction and round trip, exactly as PushHandler.push runs them:
--   1. the idempotency-key lookup (PushStore.idempotentResponse; always made, since every
--      benchmark request carries an Idempotency-Key, and it finds nothing),
--   2. the rate-limit reservation (PushStore.reserveRate: herald_rate_reserve, which takes a
--      per-partner advisory lock and commits with synchronous_commit off),
--   3. the recipient resolution (PushStore.resolve, the statement copied verbatim; the email
--      list is a text[] built from a random user, like the intake's $2::text[] parameter, so
--      the planner treats it as the intake's statement: a custom plan, re-planned per call).
-- bench/intake appends bench/intake-ceiling.sql (without its \set lines) to this file to get
-- the "all statements" transaction mix: lookups + enqueue, four round trips per push.
--
-- Run with -n -M prepared and: -D partner=<uuid> -D users=<N> -D tenant=bench
--   -D mini_app=fun.pull.gacha -D per_minute=1000000 -D per_day=100000000 -D no_wallets={}
\set uid random(1, :users)
\set k random(1, 1000000000000000)
SELECT body_hash, response FROM idempotency_keys
 WHERE partner_id = :partner::uuid AND key = 'pg-' || :client_id || '-' || :k
   AND created_at > now() - interval '24 hours';
SELECT * FROM herald_rate_reserve(:partner::uuid, :per_minute, :per_day);
WITH ids AS (
    SELECT 'e'::text AS kind, email AS ident, user_id FROM user_emails
     WHERE tenant_id = :tenant AND email = ANY(('{user' || :uid || '@bench.example}')::text[])
    UNION ALL
    SELECT 'w', wallet, user_id FROM user_wallets
     WHERE tenant_id = :tenant AND wallet = ANY(:no_wallets::text[])
), targets AS (
    SELECT u.user_id,
           EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = :mini_app) AS opted_out
      FROM (SELECT DISTINCT user_id FROM ids) AS u
)
SELECT kind, ident, user_id, NULL::text, NULL::text, NULL::bool FROM ids
UNION ALL
SELECT 'u', NULL, user_id, NULL, NULL, opted_out FROM targets
UNION ALL
SELECT 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END,
       d.environment, NULL
  FROM targets t JOIN devices d ON d.user_id = t.user_id
 WHERE NOT t.opted_out
   AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
     OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
