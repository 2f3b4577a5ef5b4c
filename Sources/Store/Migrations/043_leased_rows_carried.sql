-- The intake's notification carries the rows it leased to a worker whole, with each device's token and app
-- (functions/intake_push.sql, step 6): herald_resolve_recipients returns them (functions/resolve_recipients.sql), a
-- new result type, which the definitions folder creates again.
DROP FUNCTION IF EXISTS herald_resolve_recipients(text, text[], text[], text);
