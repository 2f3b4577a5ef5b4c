-- Creates the monthly partitions of `parent` for `months` months from `start` that do not exist yet.
-- A partition made later does not take its parent's statistics targets (CREATE TABLE ... PARTITION OF
-- copies the columns, not their settings), and autovacuum analyzes the partitions: so each new
-- partition's columns get the parent's targets that are not the default.
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
