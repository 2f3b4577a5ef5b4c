-- pgbench script for bench/delivery's Postgres ceiling: what one worker transaction costs the
-- database, without sending anything: claim :batch rows (the worker's function), then record
-- them all as sent (the worker's completion function, one statement). No claim cursors: the
-- rows share one available_at, so the worker's cursors skip nothing here either.
-- A group row's members (sql/016_delivery_groups.sql) are completed with their group and position.
SELECT coalesce(array_agg(id)::text, '{}') AS ids, coalesce(array_agg(group_id)::text, '{}') AS groups,
       coalesce(array_agg(member)::text, '{}') AS members, count(*) AS n
  FROM herald_claim_deliveries('pgbench-' || :client_id, :batch, 30, '{apns,fcm}',
                               '{}'::smallint[], '{}'::uuid[], '{}'::timestamptz[], :batch) \gset
SELECT * FROM herald_complete_deliveries('pgbench-' || :client_id, :ids::uuid[],
    array_fill('sent'::text, ARRAY[:n::int]), array_fill(''::text, ARRAY[:n::int]),
    array_fill(''::text, ARRAY[:n::int]), array_fill(''::text, ARRAY[:n::int]), :groups::uuid[], :members::integer[]);
