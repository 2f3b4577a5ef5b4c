-- The head of every (lane, partner) queue: its oldest pending row. A loose index scan (Postgres
-- has no skip scan): one index probe per partner, however many rows are pending.
-- PL/pgSQL, not SQL: the SET keeps a SQL function from being inlined, and then its statement is planned again on
-- every call (~0.35 ms of Postgres' CPU), where this one's plan is kept by the session; each worker's sampler
-- calls it every two seconds.
CREATE OR REPLACE FUNCTION herald_queue_heads()
RETURNS TABLE (lane smallint, partner_id uuid, oldest_available_at timestamptz)
LANGUAGE plpgsql STABLE
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH RECURSIVE heads AS (
        (SELECT d.lane, d.partner_id FROM deliveries d
          WHERE d.state = 'pending' ORDER BY d.lane, d.partner_id LIMIT 1)
        UNION ALL
        SELECT n.lane, n.partner_id FROM heads h,
               LATERAL (SELECT d.lane, d.partner_id FROM deliveries d
                         WHERE d.state = 'pending' AND (d.lane, d.partner_id) > (h.lane, h.partner_id)
                         ORDER BY d.lane, d.partner_id LIMIT 1) n
    )
    SELECT h.lane, h.partner_id,
           (SELECT d.available_at FROM deliveries d
             WHERE d.state = 'pending' AND d.lane = h.lane AND d.partner_id = h.partner_id
             ORDER BY d.available_at LIMIT 1)
      FROM heads h;
END
$$;
