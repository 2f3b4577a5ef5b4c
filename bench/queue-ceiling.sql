-- pgbench script for bench/compare's minimal queue ceiling: what any Postgres queue must at least
-- do per message. One transaction claims :batch due rows, oldest first, skipping rows another
-- client holds, and marks them done (an UPDATE of state). Table: bench/queue-ceiling-setup.sql.
WITH due AS (
    SELECT id FROM queue_ceiling
     WHERE state = 0 AND available_at <= now()
     ORDER BY available_at
     LIMIT :batch
       FOR UPDATE SKIP LOCKED)
UPDATE queue_ceiling q
   SET state = 2, locked_by = :client_id, locked_at = now(), attempts = q.attempts + 1
  FROM due
 WHERE q.id = due.id;
