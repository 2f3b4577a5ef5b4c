-- pgbench script for bench/intake: the three statements the intake runs per push BEFORE the
-- write, exactly as PushHandler.push runs them: in ONE pipeline (one round trip, one implicit
-- transaction, PushStore.admit), in this order:
--   1. the idempotency-key lookup (Queries.PushRequests.findIdempotentResponse; every benchmark request
--      carries an Idempotency-Key, and it finds nothing),
--   2. the recipient resolution (Queries.PushRequests.resolve: one line of herald_resolve_lines, whose query is
--      planned once per session),
--   3. the rate-limit reservation (Queries.PushRequests.reserveRate: herald_rate_reserve, which takes a
--      per-partner advisory lock held until the pipeline commits, with synchronous_commit off).
-- bench/intake appends bench/intake-ceiling.sql (without its \set lines) to this file to get
-- the "all statements" mix: two round trips per push, as the intake makes.
--
-- Run with -n -M prepared and: -D partner=<uuid> -D users=<N> -D tenant=bench
--   -D mini_app=fun.pull.gacha -D per_minute=1000000 -D per_day=100000000 -D no_wallets={}
\set uid random(1, :users)
\set k random(1, 1000000000000000)
\startpipeline
SELECT body_hash, response FROM idempotency_keys
 WHERE partner_id = :partner::uuid AND key = 'pg-' || :client_id || '-' || :k
   AND created_at > now() - interval '24 hours';
SELECT kind, ident, user_id, service, environment, opted_out
  FROM herald_resolve_lines(ARRAY[:tenant], ARRAY[:mini_app], '{1}', ('{user' || :uid || '@bench.example}')::text[],
                            '{}', :no_wallets::text[]);
SELECT * FROM herald_rate_reserve(:partner::uuid, :per_minute, :per_day);
\endpipeline
