-- pgbench script for bench/delivery's latency ceiling: what any Postgres queue must at least do for one
-- push to one device, run at the latency phase's rate (pgbench -R). The enqueue is its own durable
-- transaction (as the intake's write); one transaction claims the oldest due row, skipping rows another
-- client holds, and marks it done, with an asynchronous commit (as the workers' sessions). Table:
-- bench/queue-ceiling-setup.sql, set up with no rows. Nothing is sent, notified or counted.
INSERT INTO queue_ceiling (state, available_at, attempts, payload)
VALUES (0, now(), 0, '{"aps":{"alert":{"title":"[Pull] Deposit pending","body":"Confirmations: 1/6"},"mutable-content": 1},"channel":"mini-app","miniAppId":"fun.pull.gacha","deliveryId":"0190b0c2-8f4e-7c3a-9d2b-5e6f7a8b9c0d","senderName":"Pull","isGroup": true,"kid":"k1","sig":"Z-LlH3Oh6AsQw_m468z-bUFzbhBslsAVMCOoTEOLjdE"}');
BEGIN;
SET LOCAL synchronous_commit TO off;
WITH due AS (
    SELECT id FROM queue_ceiling
     WHERE state = 0 AND available_at <= now()
     ORDER BY available_at
     LIMIT 1
       FOR UPDATE SKIP LOCKED)
UPDATE queue_ceiling q
   SET state = 2, locked_by = :client_id, locked_at = now(), attempts = q.attempts + 1
  FROM due
 WHERE q.id = due.id;
COMMIT;
