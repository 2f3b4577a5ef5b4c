-- One resolver for every push (functions/resolve_lines.sql): the intake resolves its whole batch in one statement,
-- each identifier naming its push (p_e_line, p_w_line replace the end offsets p_e_end, p_w_end), and the backfill and
-- the single push use the same function. The per-push and per-identifier resolvers go, with their records; the
-- definitions folder creates herald_intake_push again.
DROP FUNCTION IF EXISTS herald_intake_push(
    uuid[], integer[], integer[], text[], text[], timestamptz[], text[], text[], uuid[], timestamptz[], text[], text[],
    text[], text[], timestamptz[], integer[], timestamptz[], integer[], text[], text[], integer[], text[], text[],
    integer[], uuid[], text[], text[], text, text, integer, integer);
DROP FUNCTION IF EXISTS herald_resolve_recipients(text, text[], text[], text);
DROP FUNCTION IF EXISTS herald_backfill_resolve(integer[], text[], text[], text[], text[]);
DELETE FROM schema_functions WHERE name IN ('resolve_recipients.sql', 'backfill_resolve.sql');
