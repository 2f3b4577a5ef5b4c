-- One batch of the sweep of scheduled starts (sql/062_scheduled_starts.sql), run by the workers' activity sweeper
-- (Worker/WorkerMaintenance.swift) and not by the claim, whose every call would otherwise pay for a rare case: up to
-- `p_limit` scheduled activities due at `p_now` (the worker's clock), oldest first, FOR UPDATE SKIP LOCKED
-- (live_activities_scheduled), so several workers sweep at once and each start is decided once.
--
-- Each is checked again at its time, under the user's advisory lock as a start at the partner's call is
-- (functions/activity_start.sql), with the limits of the intake that accepted it: it is refused ('refused',
-- `start_refusal`, an audit row of kind 'refuse' with the reason; nothing is sent) when the TTL its payloads carry
-- ran out before the sweep came ('expired'), the partner was revoked ('partner_revoked'), the user's in-app session
-- is older than the window ('no_session'), the user opted out ('opted_out'), is inside their quiet hours
-- ('quiet_hours': a planned start is no answer to something happening now, as a passive push is not), has none of
-- the devices left ('no_live_device'), or a start budget is spent (functions/activity_start_budget.sql). Otherwise
-- it starts now: it replaces the user's active activity of the mini-app with that one's stored end
-- (functions/activity_replace.sql), its TTL counts from now, `created_at` becomes now, and its start is queued to
-- the devices by the one writer of activity events (functions/activity_event.sql). Returns how many started and how
-- many were refused; listening workers are told when any started.
CREATE OR REPLACE FUNCTION herald_activity_start_due(p_now timestamptz, p_limit integer,
                                                     OUT started integer, OUT refused integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_due     record;
    v_held    jsonb;
    v_reason  text;
    v_expires timestamptz;
BEGIN
    started := 0;
    refused := 0;
    FOR v_due IN
        SELECT a.id, a.partner_id, a.mini_app_id, a.user_id, a.start_at, a.expires_at, a.held_start
          FROM live_activities a
         WHERE a.status = 'scheduled' AND a.start_at <= p_now
         ORDER BY a.start_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended('herald_activity_user:' || v_due.user_id, 0));
        v_held := v_due.held_start;
        v_reason := CASE
            WHEN v_due.expires_at <= p_now THEN 'expired'
            WHEN EXISTS (SELECT 1 FROM partners p WHERE p.id = v_due.partner_id AND p.revoked_at IS NOT NULL)
                THEN 'partner_revoked'
            WHEN NOT EXISTS (SELECT 1 FROM mini_app_sessions s
                              WHERE s.user_id = v_due.user_id AND s.mini_app_id = v_due.mini_app_id
                                AND s.last_seen_at >= p_now - make_interval(days => (v_held->>'sessionDays')::integer))
                THEN 'no_session'
            WHEN EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = v_due.user_id AND o.mini_app_id = v_due.mini_app_id)
                THEN 'opted_out'
            WHEN EXISTS (SELECT 1 FROM users u
                          WHERE u.id = v_due.user_id AND u.quiet_start IS NOT NULL
                            AND herald_quiet_hours_end(u.time_zone, u.quiet_start, u.quiet_end, p_now) IS NOT NULL)
                THEN 'quiet_hours'
            WHEN NOT EXISTS (SELECT 1 FROM devices d
                              WHERE d.user_id = v_due.user_id
                                AND d.device_id IN (SELECT jsonb_array_elements_text(v_held->'devices')))
                THEN 'no_live_device'
        END;
        IF v_reason IS NULL THEN
            v_reason := (herald_activity_start_budget(v_due.user_id, v_due.mini_app_id, p_now,
                                                      (v_held->>'maxActive')::integer,
                                                      (v_held->>'startsPerUser')::integer,
                                                      (v_held->>'startsPerApp')::integer)).reason;
        END IF;

        IF v_reason IS NOT NULL THEN
            UPDATE live_activities
               SET status = 'refused', start_refusal = v_reason, version = version + 1, updated_at = p_now,
                   ended_at = p_now, held_start = NULL
             WHERE id = v_due.id;
            -- The audit row only (a scheduled activity has no target), then its reason: one 'refuse' row per activity.
            PERFORM herald_activity_event(ARRAY[v_due.id], 'end', 'refuse', ARRAY[NULL::text], NULL, ARRAY[NULL::text],
                                          NULL, ARRAY[5::smallint], ARRAY[p_now]);
            UPDATE live_activity_events e SET reason = v_reason
             WHERE e.activity_id = v_due.id AND e.kind = 'refuse' AND e.created_at >= herald_uuid_v7_time(v_due.id);
            refused := refused + 1;
            CONTINUE;
        END IF;

        PERFORM herald_activity_replace(v_due.user_id, v_due.mini_app_id, p_now, NULL, NULL, NULL, NULL,
                                        (v_held->>'alertedLimit')::integer);
        v_expires := p_now + (v_due.expires_at - v_due.start_at);
        UPDATE live_activities
           SET status = 'active', version = version + 1, created_at = p_now, updated_at = p_now,
               expires_at = v_expires, held_start = NULL
         WHERE id = v_due.id;
        -- The devices the intake found that the user still has; the claim judges each one's token as for any start.
        INSERT INTO live_activity_targets (activity_id, device_id, service)
        SELECT v_due.id, x.device_id, x.service
          FROM unnest(ARRAY(SELECT jsonb_array_elements_text(v_held->'devices')),
                      ARRAY(SELECT jsonb_array_elements_text(v_held->'services'))) AS x (device_id, service)
         WHERE EXISTS (SELECT 1 FROM devices d WHERE d.user_id = v_due.user_id AND d.device_id = x.device_id);
        PERFORM herald_activity_event(ARRAY[v_due.id], 'start', 'start', ARRAY[v_held->>'apns'], NULL,
                                      ARRAY[v_held->>'fcm'], NULL, ARRAY[10::smallint], ARRAY[v_expires],
                                      p_key => v_held->>'key', p_alert_title => v_held->>'alertTitle',
                                      p_ttl_seconds => (v_held->>'ttlSeconds')::integer);
        started := started + 1;
    END LOOP;
    IF started > 0 THEN
        PERFORM pg_notify('herald_deliveries', '');
    END IF;
END
$$;
