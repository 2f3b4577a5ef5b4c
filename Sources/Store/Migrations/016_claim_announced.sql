-- A claim made because new work was announced (issue 10; docs/performance.md, "The latency floor").
--
-- Every NOTIFY wakes every worker, and with the queue drained each of them claimed for the rows the
-- first one took: two claims per push with two workers at low rates, 0.7-1.8 ms of Postgres each, on
-- the same cores as the pushes. At most one such claim runs at a time per set of services: a worker
-- that finds another one's under way returns at once (nothing claimed). The rows it would have found
-- are being claimed by the other, and a row committed meanwhile comes with a NOTIFY of its own (the
-- intake announces every commit). Claims of a worker still draining a backlog (its last claim was
-- full) do not take part: both workers claim side by side then.
CREATE FUNCTION herald_claim_announced(p_worker text, p_limit integer, p_lease_seconds integer, p_services text[],
                                       p_cursor_lanes smallint[], p_cursor_partners uuid[],
                                       p_cursor_times timestamptz[], p_bulk_limit integer)
RETURNS TABLE (id uuid, service text, environment text, payload text, attempts integer,
               expires_at timestamptz, token text, verdict text, lane smallint, partner_id uuid,
               available_at timestamptz, bundle_id text,
               activity_event text, priority smallint)
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    -- Held until the claim's transaction ends, like the row locks it takes.
    IF NOT pg_try_advisory_xact_lock(hashtextextended('herald_claim_announced:' || array_to_string(p_services, ','), 0)) THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM herald_claim_deliveries(p_worker, p_limit, p_lease_seconds, p_services, p_cursor_lanes,
                                                       p_cursor_partners, p_cursor_times, p_bulk_limit);
END
$$;
