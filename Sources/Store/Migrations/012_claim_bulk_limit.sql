-- The claim's bulk allowance: a worker holds at most HERALD_WORKER_MAX_BULK_IN_FLIGHT bulk rows at a time.
--
-- Without it, with the realtime lane empty, a worker fills its whole in-flight window (2,000 rows) with
-- bulk rows of a backfill or replay, and a realtime push claimed next queues behind them on the upstream
-- connections. The claim takes realtime rows up to p_limit as before, and bulk
-- rows only up to p_bulk_limit (the worker's allowance minus the bulk rows it holds), so a realtime row
-- waits behind at most that many bulk sends.
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[]);
