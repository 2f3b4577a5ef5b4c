-- No planner statistics for the history's columns that are only ever read, never searched: a sent group's member arrays and the payload. ANALYZE detoasts
-- every sampled value of a column it keeps statistics for and sorts its elements: for a month's partition
-- holding 2,000 group rows an ANALYZE took 119 ms, 13 ms without these columns, and autovacuum runs one
-- after every few thousand rows a drain writes. No query filters, joins or sorts on them.
--
-- The outbox (`deliveries`) keeps its statistics: the same setting on its payload and member columns
-- made the Live Activity drain cost Postgres 111-116 µs a push instead of 55-72 (bench/live-activities,
-- alternated builds), for a cause not yet looked into.
--
-- On the partitioned table, ALTER reaches every existing partition; functions/ensure_monthly_partitions.sql
-- gives partitions made later the same targets.
ALTER TABLE delivery_history
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN members SET STATISTICS 0,
    ALTER COLUMN member_users SET STATISTICS 0,
    ALTER COLUMN member_devices SET STATISTICS 0;
