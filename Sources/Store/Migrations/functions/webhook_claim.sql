-- Leases due events (and events whose sender's lease ran out) to `p_worker`: at most `p_limit`, and per
-- partner at most its room in this worker (`p_room_partners` / `p_rooms`; `p_per_partner` for the others),
-- oldest first, so one partner's backlog or slow endpoint takes no more than its share. Partners with no
-- room are left out of the scan itself, and the scan reads a window of the oldest due events in index
-- order: a claim costs the same with 10 or 100,000 events waiting. Each event comes with its partner's secret, and
-- the secret before the last rotation while its overlap lasts (the sender signs with both).
-- PL/pgSQL, not SQL: a SQL function's statement is planned again on every call, ~0.5 ms of Postgres' CPU for
-- this one, and every worker polls once a second whether events wait or not. Here a poll that finds nothing due
-- is two probes of the partial indexes, and the claim's plan is kept by the session.
CREATE OR REPLACE FUNCTION herald_webhook_claim(p_worker text, p_limit integer, p_per_partner integer,
                                     p_room_partners uuid[], p_rooms integer[], p_lease_seconds integer,
                                     p_now timestamptz)
RETURNS TABLE (id uuid, partner_id uuid, body text, attempts integer, window_start timestamptz, url text,
               secret text, previous_secret text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.state = 'pending' AND e.available_at <= p_now)
       AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.state = 'sending' AND e.lease_expires_at <= p_now) THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH full_partners AS (
        SELECT coalesce(array_agg(r.partner), '{}') AS ids
          FROM unnest(p_room_partners, p_rooms) AS r (partner, room)
         WHERE r.room <= 0
    ), due AS (
        (SELECT e.id, e.partner_id, e.available_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'pending' AND e.available_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.available_at
          LIMIT p_limit * 4)
        UNION ALL
        (SELECT e.id, e.partner_id, e.lease_expires_at
           FROM webhook_events e, full_partners f
          WHERE e.state = 'sending' AND e.lease_expires_at <= p_now AND e.partner_id <> ALL (f.ids)
          ORDER BY e.lease_expires_at
          LIMIT p_limit * 4)
    ), ranked AS (
        SELECT d.id, d.available_at,
               row_number() OVER (PARTITION BY d.partner_id ORDER BY d.available_at, d.id) AS rank,
               coalesce(r.room, p_per_partner) AS room
          FROM due d
          LEFT JOIN unnest(p_room_partners, p_rooms) AS r (partner, room) ON r.partner = d.partner_id
    ), picked AS (
        SELECT e.id
          FROM webhook_events e
         WHERE e.id IN (SELECT k.id FROM ranked k WHERE k.rank <= k.room ORDER BY k.available_at LIMIT p_limit)
           AND (e.state = 'pending' OR (e.state = 'sending' AND e.lease_expires_at <= p_now))
           FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_events e
       SET state = 'sending', leased_by = p_worker, attempts = e.attempts + 1,
           lease_expires_at = p_now + make_interval(secs => p_lease_seconds)
      FROM picked k, partners p
     WHERE e.id = k.id AND p.id = e.partner_id
    RETURNING e.id, e.partner_id, e.body, e.attempts, e.window_start, p.webhook_url, p.webhook_secret,
              CASE WHEN p.previous_webhook_secret_expires_at > p_now THEN p.previous_webhook_secret END;
END
$$;
