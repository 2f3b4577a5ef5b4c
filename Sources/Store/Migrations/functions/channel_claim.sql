-- Leases up to `p_limit` broadcast channels with work due (sql/034_live_channels.sql) for `p_lease_seconds`,
-- oldest due first. An open channel past its TTL first becomes 'ending' with the TTL's end as its newest change
-- (and an 'expire' audit row, functions/channel_event.sql); one still opening at its TTL was never made and simply
-- ends. SKIP LOCKED: workers claim side by side, and a channel a partner is changing right now waits for the next
-- claim.
CREATE OR REPLACE FUNCTION herald_channel_claim(p_limit integer, p_lease_seconds integer, p_now timestamptz)
RETURNS TABLE (id uuid, status text, apns_channel_id text, environment text, version integer,
               sent_version integer, apns_payload text, apns_priority smallint, expires_at timestamptz,
               delete_at timestamptz, attempts integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_ids uuid[];
BEGIN
    SELECT coalesce(array_agg(d.id), '{}') INTO v_ids FROM (
        SELECT c.id FROM live_channels c
         WHERE c.status IN ('opening', 'open', 'ending') AND c.next_at <= p_now
           AND (c.leased_until IS NULL OR c.leased_until <= p_now)
         ORDER BY c.next_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED) d;
    IF cardinality(v_ids) = 0 THEN
        RETURN;
    END IF;
    -- The TTL: the end rendered with the newest state replaces any change not broadcast yet.
    PERFORM herald_channel_event(v_ids, 'expire', p_now);
    -- The users' activities started from a channel that just reached its TTL end with it.
    UPDATE live_activities a
       SET status = 'expired', ended_at = p_now, updated_at = p_now, dismiss_at = a.expires_at, version = a.version + 1
      FROM live_channels c
     WHERE c.id = ANY (v_ids) AND c.status = 'ending' AND a.channel_id = c.id AND a.status = 'active';
    RETURN QUERY
    UPDATE live_channels c
       SET leased_until = p_now + make_interval(secs => p_lease_seconds), attempts = c.attempts + 1
     WHERE c.id = ANY (v_ids)
    RETURNING c.id, c.status, c.apns_channel_id, c.environment, c.version, c.sent_version, c.apns_payload,
              c.apns_priority, c.expires_at, c.delete_at, c.attempts;
END
$$;
