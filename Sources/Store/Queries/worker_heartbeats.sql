-- name: beat
-- A worker's heartbeat: its row, inserted or replaced.
INSERT INTO worker_heartbeats (worker_id, host, version, started_at, last_seen_at, in_flight, paused_upstreams,
                               claims_per_second, interval_seconds, release)
VALUES ($1, $2, $3, $4, now(), $5, $6::text[], $7, $8, $9)
ON CONFLICT (worker_id) DO UPDATE
   SET host = EXCLUDED.host, version = EXCLUDED.version, release = EXCLUDED.release, started_at = EXCLUDED.started_at,
       last_seen_at = EXCLUDED.last_seen_at, in_flight = EXCLUDED.in_flight,
       paused_upstreams = EXCLUDED.paused_upstreams, claims_per_second = EXCLUDED.claims_per_second,
       interval_seconds = EXCLUDED.interval_seconds;

-- name: list
-- parameters: lostAfterBeats Double
-- returns: WorkerStatus
-- Every worker of the last day, live ones first; $1 how many missed beats make a worker lost.
-- A small table (one row per worker of the last day).
SELECT worker_id, host, version, release, started_at, in_flight,
       array_to_string(paused_upstreams, ',') AS paused_upstreams,
       claims_per_second, interval_seconds, last_seen_at,
       extract(epoch FROM now() - last_seen_at)::float8 AS seconds_since_seen,
       last_seen_at < now() - make_interval(secs => interval_seconds * $1) AS lost
  FROM worker_heartbeats
 ORDER BY lost, worker_id;
