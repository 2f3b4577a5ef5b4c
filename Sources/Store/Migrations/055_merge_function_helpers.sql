-- herald_activity_ends_dispatch reads the ended activities' ends, partners and states itself, given their ids
-- (functions/activity_ends_dispatch.sql): the old signature goes, so no call resolves to it, and the definitions
-- folder creates the new one.
DROP FUNCTION IF EXISTS herald_activity_ends_dispatch(uuid[], text[], text[], timestamptz[], uuid[], jsonb[], text,
    smallint, smallint);
