-- The rows an intake's notification lists are leased by a statement of the worker's own (DeliveryStore.claimListedSQL),
-- which skips the function call's cost: herald_claim_deliveries loses its p_ids, and the definitions folder creates
-- the 8-argument signature again.
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[],
    integer, uuid[]);
