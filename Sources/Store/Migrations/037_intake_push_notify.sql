-- herald_intake_push takes the channel of the worker to wake (functions/intake_push.sql): the old signature goes,
-- and the definitions folder creates the new one.
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[], text[],
    uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], timestamptz[], integer[], text[],
    text[], integer[], text[], text[], integer[], uuid[], text[], text[]);
