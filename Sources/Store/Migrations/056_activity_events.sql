-- Every Live Activity event is queued by one function (functions/activity_event.sql: herald_activity_event takes
-- the place of herald_activity_dispatch and writes the audit row too); a start's deliveries take each device's
-- environment from its device row, so herald_activity_start no longer takes the environments; and
-- herald_activity_ends_dispatch, which the start's replacement end now calls too, is told whether to wake the
-- workers. The old signatures go, so no call resolves to them, and the definitions folder creates the new ones.
DROP FUNCTION IF EXISTS herald_activity_dispatch(uuid[], text, text[], text[], text[], text[], smallint[],
    timestamptz[], text, smallint, uuid[]);
DROP FUNCTION IF EXISTS herald_activity_start(uuid, text, text, text, uuid, timestamptz, text, text, text, jsonb,
    jsonb, jsonb, timestamptz, bigint, text, text, bigint, text[], text[], text[], text, text, uuid, text, text,
    bigint, smallint, integer, integer, integer, integer, text, integer, uuid);
DROP FUNCTION IF EXISTS herald_activity_ends_dispatch(uuid[], text, smallint, smallint);
