-- bench/queue-designs, design "groups": one outbox row per :group deliveries of a request (their ids,
-- users, devices and payloads as arrays), leased and deleted as one; one history row per delivery.
-- :batch / :group rows per transaction, so every design moves :batch deliveries per transaction.
WITH c AS (SELECT id FROM queue_groups WHERE state = 0 AND available_at <= now() ORDER BY available_at
            LIMIT :batch::int / :group::int FOR UPDATE SKIP LOCKED),
     u AS (UPDATE queue_groups g SET state = 1, leased_by = :client_id, lease_expires_at = now() + interval '30 s',
                  attempts = g.attempts + 1
             FROM c WHERE g.id = c.id RETURNING g.id, g.payloads)
SELECT coalesce(array_agg(u.id)::text, '{}') AS gids FROM u \gset
WITH finished AS (DELETE FROM queue_groups WHERE id = ANY (:gids::bigint[]) AND leased_by = :client_id RETURNING *)
INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts, created_at,
                              finished_at)
SELECT x.id, '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000001', 0, 'apns', x.u, x.d, 'sent',
       f.attempts, now(), now()
  FROM finished f, unnest(f.ids, f.user_ids, f.device_ids) AS x (id, u, d);
