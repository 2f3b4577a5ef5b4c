-- The head of every (lane, partner) queue: its oldest pending row. A loose index scan (Postgres
-- has no skip scan): one index probe per partner, however many rows are pending.
CREATE OR REPLACE FUNCTION herald_queue_heads()
RETURNS TABLE (lane smallint, partner_id uuid, oldest_available_at timestamptz)
LANGUAGE sql STABLE
SET jit = off
AS $$
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
      FROM heads h
$$;
