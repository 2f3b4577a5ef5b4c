-- herald_intake_push takes the user each slot was signed for (p_s_user) and answers a 'render' with who the push's
-- identifiers resolved to (functions/intake_push.sql): the old signature goes, so no call resolves to it, and the
-- definitions folder creates the new one.
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], timestamptz[], integer[],
    text[], text[], integer[], text[], text[], integer[], uuid[], text[], text[], text, text, integer, integer, text[]);
