-- True while every delivery of a reminder is still queued and untouched: in the outbox, pending, never
-- attempted. A delivery a worker claimed has attempts > 0 (kept on a retry, given back when an upstream
-- setup fault deferred it unsent), and a finished one has left the outbox. Probes deliveries_pkey.
CREATE OR REPLACE FUNCTION herald_reminder_pending(p_deliveries uuid[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT count(*) = cardinality(p_deliveries)
      FROM deliveries d
     WHERE d.id = ANY (p_deliveries) AND d.state = 'pending' AND d.attempts = 0;
$$;
