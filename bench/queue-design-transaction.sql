-- bench/queue-designs, design "transaction": no lease row version. The claim only locks its rows (FOR
-- UPDATE SKIP LOCKED) and reads them with their devices' tokens; the same transaction later deletes them,
-- writes their history rows and the request's counts, and commits. A worker would hold the transaction
-- open while it sends (the session's liveness as the lease). Herald's tables, :batch rows per transaction.
BEGIN;
SELECT coalesce(array_agg(d.ctid)::text, '{}') AS tids FROM (
  SELECT d.ctid, d.payload, v.apns_token FROM deliveries d
    LEFT JOIN devices v ON v.user_id = d.user_id AND v.device_id = d.device_id
   WHERE d.ctid = ANY (ARRAY(SELECT x.ctid FROM deliveries x
                              WHERE x.state = 'pending' AND x.lane = 0 AND x.partner_id = '00000000-0000-4000-8000-000000000001'
                                AND x.available_at <= now() ORDER BY x.available_at LIMIT :batch FOR UPDATE SKIP LOCKED))) d \gset
WITH finished AS (DELETE FROM deliveries d WHERE d.ctid = ANY (:tids::tid[]) RETURNING d.*),
     history AS (INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome, attempts,
                                               created_at, finished_at, activity_event, request_created_at)
                 SELECT id, request_id, partner_id, lane, service, user_id, device_id, 'sent', attempts + 1, created_at, now(),
                        activity_event, request_created_at FROM finished),
     counts AS (SELECT request_id, request_created_at, count(*) AS n FROM finished GROUP BY 1, 2)
UPDATE push_requests r SET sent = r.sent + c.n FROM counts c WHERE r.id = c.request_id AND r.created_at = c.request_created_at;
COMMIT;
