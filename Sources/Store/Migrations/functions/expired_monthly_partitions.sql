-- The monthly partitions of `parent` that end at or before `cutoff` (retention). The caller
-- detaches each with DETACH PARTITION ... CONCURRENTLY (which cannot run inside a function) and
-- then drops it, so writers to the parent are never blocked behind an ACCESS EXCLUSIVE lock.
CREATE OR REPLACE FUNCTION herald_expired_monthly_partitions(parent text, cutoff timestamptz)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    child record;
    upper_bound timestamptz;
BEGIN
    FOR child IN
        SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = parent::regclass
    LOOP
        upper_bound := substring(child.bound FROM 'TO \(''([^'']+)''\)')::timestamptz;
        IF upper_bound IS NOT NULL AND upper_bound <= cutoff THEN
            RETURN NEXT child.relname;
        END IF;
    END LOOP;
END
$$;
