-- The claim returns the device's bundle id (the APNs topic when the host registered one, see
-- APNsUpstream), and the completion knows a 'deferred' outcome: a row held back because the upstream
-- refused Herald's own credentials or configuration goes back to pending without spending
-- the attempt its claim counted.

DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[]);

-- As in 006_worker.sql, plus 'deferred': pending again at its time, the claim's attempt given back.
DROP FUNCTION IF EXISTS herald_complete_deliveries(text, uuid[], text[], text[], text[], text[]);
