-- bench/queue-designs, design "lease": Herald's own claim and completion functions (what the workers
-- run), nothing sent: claim :batch rows (leased with a deadline, one row version each), then record them
-- all sent (delete, history row, the request's counts). The same transaction as bench/delivery-ceiling.sql.
SELECT coalesce(array_agg(id)::text, '{}') AS ids, count(*) AS n
  FROM herald_claim_deliveries('pgbench-' || :client_id, :batch, 30, '{apns,fcm}',
                               '{}'::smallint[], '{}'::uuid[], '{}'::timestamptz[], :batch) \gset
SELECT * FROM herald_complete_deliveries('pgbench-' || :client_id, :ids::uuid[],
    array_fill('sent'::text, ARRAY[:n::int]), array_fill(''::text, ARRAY[:n::int]),
    array_fill(''::text, ARRAY[:n::int]), array_fill(''::text, ARRAY[:n::int]));
