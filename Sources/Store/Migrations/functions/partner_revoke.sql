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
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
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

-- Ends a revoked partner's active activities at once (the ends rendered with an immediate dismissal: `p_apns`,
-- `p_fcm`, their timestamps `p_timestamps`), with an audit row each (kind 'revoke-end'). Realtime lane, priority
-- 10: the activity leaves the lock screen now. An activity that follows a broadcast channel ends with the
-- channel's end (herald_partner_revoke closed it): nothing is sent for it here. Returns how many ended.
CREATE OR REPLACE FUNCTION herald_partner_end_activities(p_partner uuid, p_ids uuid[], p_apns text[], p_fcm text[],
                                                         p_timestamps bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
SET jit = off
SET enable_seqscan = off
AS $$
DECLARE
    v_ids     uuid[];
    v_apns    text[];
    v_fcm     text[];
    v_expires timestamptz[];
    v_states  jsonb[];
    v_ended   integer;
BEGIN
    WITH done AS (
        UPDATE live_activities a
           SET status = 'ended', ended_at = now(), updated_at = now(), dismiss_at = now(), version = a.version + 1,
               apns_end_payload = x.apns, fcm_end_payload = x.fcm, apns_end_priority = 10,
               end_timestamp = x.stamp, last_timestamp = x.stamp
          FROM unnest(p_ids, p_apns, p_fcm, p_timestamps) AS x (id, apns, fcm, stamp)
         WHERE a.id = x.id AND a.partner_id = p_partner AND a.status = 'active'
        RETURNING a.id, a.apns_end_payload, a.fcm_end_payload, a.created_at, a.state, a.channel_id
    )
    SELECT count(*), coalesce(array_agg(id) FILTER (WHERE channel_id IS NULL), '{}'),
           array_agg(apns_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(fcm_end_payload) FILTER (WHERE channel_id IS NULL),
           array_agg(created_at + interval '12 hours') FILTER (WHERE channel_id IS NULL),
           array_agg(state) FILTER (WHERE channel_id IS NULL)
      INTO v_ended, v_ids, v_apns, v_fcm, v_expires, v_states
      FROM done;
    PERFORM herald_activity_ends_dispatch(v_ids, v_apns, v_fcm, v_expires,
                                          array_fill(p_partner, ARRAY[cardinality(v_ids)]), v_states, 'revoke-end',
                                          10::smallint, 0::smallint);
    RETURN v_ended;
END
$$;
