-- herald_claim_deliveries takes the rows an intake's notification listed (functions/claim_deliveries.sql): the old
-- signature goes, and the definitions folder creates the new one.
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[],
    integer);
