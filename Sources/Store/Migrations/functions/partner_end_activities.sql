-- Ends a revoked partner's active activities at once (the ends rendered with an immediate dismissal: `p_apns`,
-- `p_fcm`, their timestamps `p_timestamps`), with an audit row each (kind 'revoke-end'). Realtime lane, priority
-- 10: the activity leaves the lock screen now. An activity that follows a broadcast channel ends with the
-- channel's end (herald_partner_revoke closed it): nothing is sent for it here. Returns how many ended.
CREATE OR REPLACE FUNCTION herald_partner_end_activities(p_partner uuid, p_ids uuid[], p_apns text[], p_fcm text[],
                                                         p_timestamps bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_ids uuid[];
BEGIN
    WITH done AS (
        UPDATE live_activities a
           SET status = 'ended', ended_at = now(), updated_at = now(), dismiss_at = now(), version = a.version + 1,
               apns_end_payload = x.apns, fcm_end_payload = x.fcm, apns_end_priority = 10,
               end_timestamp = x.stamp, last_timestamp = x.stamp
          FROM unnest(p_ids, p_apns, p_fcm, p_timestamps) AS x (id, apns, fcm, stamp)
         WHERE a.id = x.id AND a.partner_id = p_partner AND a.status = 'active'
        RETURNING a.id
    )
    SELECT coalesce(array_agg(id), '{}') INTO v_ids FROM done;
    PERFORM herald_activity_ends_dispatch(v_ids, 'revoke-end', 10::smallint, 0::smallint, true);
    RETURN cardinality(v_ids);
END
$$;
