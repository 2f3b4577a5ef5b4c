-- A partner's revocation, in the transaction that sets partners.revoked_at (Sources/Store/PartnerStore.swift,
-- `revoke`): nothing it queued is sent after it.
-- - Its pending deliveries (queued, scheduled up to days ahead, back from a retry, an activity's held rows) are due
--   now: the next claim gives each the verdict 'cancelled' (functions/claim_deliveries.sql) and the worker records
--   it, counted on its request, never replayable. A row a worker holds at this moment is sent or not as that send
--   goes; should it come back for a retry, its next claim cancels it.
-- - Its reminders not yet sent are cancelled (their deliveries with the rest).
-- - Its open broadcast channels reach their end now: the next channel claim broadcasts the end and deletes them.
-- Returns its active activities (locked), which the caller ends at once on every device with ends it renders
-- (herald_partner_end_activities): a payload is signed in Swift.
CREATE OR REPLACE FUNCTION herald_partner_revoke(p_partner uuid)
RETURNS TABLE (id uuid, template text, attributes text, state text, last_timestamp bigint, created_at timestamptz,
               expires_at timestamptz, follows_channel boolean)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
BEGIN
    UPDATE deliveries d SET available_at = now()
     WHERE d.state = 'pending' AND d.lane IN (0, 1) AND d.partner_id = p_partner AND d.available_at > now();
    UPDATE reminders r SET status = 'cancelled', finished_at = now()
     WHERE r.status = 'scheduled' AND r.partner_id = p_partner;
    -- The partner held its mini-app id until now: its open channels are that mini-app's.
    UPDATE live_channels c SET expires_at = least(c.expires_at, now()), next_at = now(), updated_at = now()
     WHERE c.status IN ('opening', 'open') AND c.partner_id = p_partner
       AND c.mini_app_id = (SELECT p.mini_app_id FROM partners p WHERE p.id = p_partner);
    PERFORM pg_notify('herald_deliveries', '');
    RETURN QUERY
    SELECT a.id, a.template, a.attributes::text, a.state::text, a.last_timestamp, a.created_at, a.expires_at,
           a.channel_id IS NOT NULL
      FROM live_activities a
     WHERE a.status = 'active' AND a.partner_id = p_partner
       FOR UPDATE;
END
$$;
