-- No planner statistics for the history's columns that are only ever read, never searched: a sent group's member arrays and the payload. ANALYZE detoasts
-- every sampled value of a column it keeps statistics for and sorts its elements: for a month's partition
-- holding 2,000 group rows an ANALYZE took 119 ms, 13 ms without these columns, and autovacuum runs one
-- after every few thousand rows a drain writes. No query filters, joins or sorts on them.
--
-- The outbox (`deliveries`) keeps its statistics: the same setting on its payload and member columns
-- made the Live Activity drain cost Postgres 111-116 µs a push instead of 55-72 (bench/live-activities,
-- alternated builds), for a cause not yet looked into.
--
-- On the partitioned table, ALTER reaches every existing partition; the function below gives partitions
-- made later the same targets.
ALTER TABLE delivery_history
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN members SET STATISTICS 0,
    ALTER COLUMN member_users SET STATISTICS 0,
    ALTER COLUMN member_devices SET STATISTICS 0;

-- A partition made later does not take its parent's statistics targets (CREATE TABLE ... PARTITION OF
-- copies the columns, not their settings), and autovacuum analyzes the partitions: as sql/003's function,
-- and a new partition's columns get the parent's targets that are not the default.
CREATE OR REPLACE FUNCTION herald_ensure_monthly_partitions(parent text, start timestamptz, months integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    first_month date := date_trunc('month', start AT TIME ZONE 'UTC')::date;
    lower_bound date;
    partition_name text;
    target record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('herald_partitions', 0));
    FOR i IN 0 .. months - 1 LOOP
        lower_bound := (first_month + make_interval(months => i))::date;
        partition_name := format('%s_%s', parent, to_char(lower_bound, 'YYYY_MM'));
        -- The lock above makes this check and the CREATE one step for every caller of this function.
        CONTINUE WHEN to_regclass(quote_ident(partition_name)) IS NOT NULL;
        EXECUTE format(
            'CREATE TABLE IF NOT EXISTS %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
            partition_name, parent,
            (lower_bound::timestamp AT TIME ZONE 'UTC'),
            ((lower_bound + interval '1 month')::timestamp AT TIME ZONE 'UTC'));
        FOR target IN
            SELECT a.attname, a.attstattarget FROM pg_attribute a
             WHERE a.attrelid = parent::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attstattarget >= 0
        LOOP
            EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET STATISTICS %s',
                           partition_name, target.attname, target.attstattarget);
        END LOOP;
    END LOOP;
END
$$;
