-- pgbench script for bench/intake: the ceiling of the intake's write: the rows the intake writes for
-- one accepted single-recipient push (idempotency row, push_requests audit row, user_senders, one
-- deliveries row; functions/intake_push.sql and functions/outbox_write.sql) as one plain SQL
-- statement, no PL/pgSQL in between, one transaction per push.
--
-- Run with -n -M prepared and: -D partner=<partner uuid> -D users=<N>
-- Values are those the intake writes for bench/intake.lua's body: a time-ordered request id
-- (like the intake's UUIDv7), a random delivery id (like the intake's UUID()), a 172-byte
-- stored response, the same title/body/deepLink/data, and a ~490-byte APNs payload unique
-- per row (delivery id, random hex and a 43-character signature, as rendered by the intake).
-- pgbench turns every ":name" into a parameter, also inside string literals, so JSON values
-- that follow a colon (1, 0, true) are passed through format('%s') instead of written inline.
\set uid random(1, :users)
\set k random(1, 1000000000000000)
WITH p AS MATERIALIZED (
    SELECT herald_uuid_v7() AS rid,
           herald_uuid_v7() AS did,
           now() AS ts,
           'pg-' || :client_id || '-' || :k AS ikey,
           md5(:k::text) || md5(:uid::text) AS hx
), idem AS (
    INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
    SELECT :partner::uuid, p.ikey, encode(sha256(p.ikey::bytea), 'hex'), p.rid,
           format('{"requestId":"%s","status":"queued","recipients":%s,"deliveries":%s,"suppressed":%s,"sent":%s,"failed":%s,"missing":{"emails":[],"wallets":[]}}',
                  p.rid, 1, 1, 0, 0, 0),
           p.ts
      FROM p
    ON CONFLICT (partner_id, key) DO UPDATE
       SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
           response = EXCLUDED.response, created_at = EXCLUDED.created_at
     WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours'
    RETURNING 1
), go AS (
    SELECT 1 AS ok WHERE EXISTS (SELECT 1 FROM idem)
), audit AS (
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
        deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed,
        missing)
    SELECT p.rid, p.ts, :partner::uuid, 'fun.pull.gacha', p.ikey, '[Pull] Deposit confirmed',
           '0.25 ETH arrived in your Pull wallet after 6 confirmations. Tap to see it.',
           'basedapp://miniapp/fun.pull.gacha/deposits/0x' || left(p.hx, 12),
           format('{"txHash":"0x%s"}', substr(p.hx, 13, 40))::jsonb, NULL, NULL, NULL, 0, 1,
           1, 0, '{"emails":[],"wallets":[]}'::jsonb
      FROM go, p
    RETURNING 1
), senders AS (
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    SELECT u, 'fun.pull.gacha', p.ts FROM go, p, unnest(ARRAY['u' || :uid]) AS u
    ON CONFLICT DO NOTHING
), outbox AS (
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id,
        device_id, environment, payload, available_at, expires_at)
    SELECT p.did, p.rid, p.ts, :partner::uuid, 0, 'apns', 'u' || :uid, 'd-ios', 'production',
           format('{"aps":{"alert":{"title":"[Pull] Deposit confirmed","body":"0.25 ETH arrived in your Pull wallet after 6 confirmations. Tap to see it."},"mutable-content":%s},"channel":"mini-app","miniAppId":"fun.pull.gacha","deepLink":"basedapp://miniapp/fun.pull.gacha/deposits/0x%s","deliveryId":"%s","senderName":"Pull","txHash":"0x%s","isGroup":%s,"kid":"bench","sig":"%s"}',
                  1, left(p.hx, 12), p.did, substr(p.hx, 13, 40), 'true', left(translate(encode(sha256(p.hx::bytea), 'base64'), '+/', '-_'), 43)),
           p.ts, NULL
      FROM go, p
    RETURNING 1
)
SELECT (SELECT count(*) FROM audit), (SELECT count(*) FROM outbox);
