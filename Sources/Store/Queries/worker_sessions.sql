-- The worker's sessions: their settings and the registrations of its listener connections (DeliveryStore).

-- name: sessionSettings
-- returns: NoRow
-- A worker session's settings: commits that do not wait for the disk (a delivery lost in a crash is sent again),
-- and no JIT (its compilation costs more than the worker's short statements).
SELECT set_config('synchronous_commit', 'off', false) AS synchronous_commit, set_config('jit', 'off', false) AS jit;

-- name: claimSession
-- returns: NoRow
-- The claimer session's planner settings, as herald_claim_deliveries' SET clauses: one generic plan and index
-- paths only.
SELECT set_config('plan_cache_mode', 'force_generic_plan', false) AS plan_cache_mode,
       set_config('enable_seqscan', 'off', false) AS enable_seqscan;

-- name: serverPID
-- returns: DeliveryStore.ServerProcess
-- The server process serving this connection (behind a proxy, libpq's PQbackendPID is the proxy's).
SELECT pg_backend_pid() AS pid;

-- name: listeners
-- parameters: applicationNamePrefix String
-- returns: DeliveryStore.ListenerConnection
-- The workers' listener connections, by server process, with the lease each registered: $1 the application name's
-- start (`herald-worker listener%`). pg_stat_activity is small (one row a connection).
SELECT a.pid, a.application_name, l.worker_id, l.lease_seconds
  FROM pg_stat_activity a
  LEFT JOIN worker_listeners l ON l.pid = a.pid
 WHERE a.datname = current_database() AND a.application_name LIKE $1 ORDER BY a.pid;

-- name: registerListener
-- parameters: worker String, leaseSeconds Int
-- The listener connection's own registration: $1 worker, $2 lease seconds. Removes the worker's other listeners'
-- rows and those of server processes that are gone.
WITH gone AS (
    DELETE FROM worker_listeners l
     WHERE (l.worker_id = $1 AND l.pid <> pg_backend_pid())
        OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid)
)
INSERT INTO worker_listeners (pid, worker_id, lease_seconds) VALUES (pg_backend_pid(), $1, $2)
ON CONFLICT (pid) DO UPDATE
   SET worker_id = EXCLUDED.worker_id, lease_seconds = EXCLUDED.lease_seconds, registered_at = now();

-- name: unregisterListeners
-- parameters: worker String
-- Withdraws worker $1's registrations (a draining worker).
DELETE FROM worker_listeners WHERE worker_id = $1;
