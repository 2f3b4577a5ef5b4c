-- The audience of a start: the recipient's user in the tenant, whether it has a recent session with the
-- mini-app and opted out of it, its devices that can show an activity of the template (an iPhone with a
-- push-to-start token for it: the template's own when registered, else the device's single one; an Android
-- phone with an FCM token; none invalidated), and the activity a start would replace.
CREATE OR REPLACE FUNCTION herald_activity_audience(p_tenant text, p_email text, p_wallet text, p_mini_app text,
                                         p_session_since timestamptz, p_template text)
RETURNS TABLE (user_id text, has_session boolean, opted_out boolean, devices text, old_id uuid, old_template text, old_attributes text, old_state text,
               old_last_timestamp bigint, old_created_at timestamptz, old_expires_at timestamptz)
LANGUAGE plpgsql STABLE
-- plpgsql, not sql: a sql function is planned again on every call.
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH u AS (
        SELECT e.user_id FROM user_emails e WHERE e.tenant_id = p_tenant AND e.email = p_email
        UNION ALL
        SELECT w.user_id FROM user_wallets w WHERE w.tenant_id = p_tenant AND w.wallet = p_wallet
        LIMIT 1
    )
    SELECT u.user_id,
           EXISTS (SELECT 1 FROM mini_app_sessions s
                    WHERE s.user_id = u.user_id AND s.mini_app_id = p_mini_app AND s.last_seen_at >= p_session_since),
           EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_app),
           coalesce(l.devices, '[]'),
           a.id, a.template, a.attributes::text, a.state::text, a.last_timestamp, a.created_at, a.expires_at
      FROM u
      LEFT JOIN LATERAL (
          -- [[device_id, service, environment], ...] in device order.
          SELECT json_agg(json_build_array(d.device_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END,
                                           d.environment) ORDER BY d.device_id)::text AS devices
            FROM devices d
           WHERE d.user_id = u.user_id
             AND ((d.platform = 'ios'
                   AND CASE WHEN EXISTS (SELECT 1 FROM device_push_to_start_tokens p
                                          WHERE p.user_id = d.user_id AND p.device_id = d.device_id
                                            AND p.template = p_template)
                            THEN EXISTS (SELECT 1 FROM device_push_to_start_tokens p
                                          WHERE p.user_id = d.user_id AND p.device_id = d.device_id
                                            AND p.template = p_template AND p.invalidated_at IS NULL)
                            ELSE d.apns_push_to_start_token IS NOT NULL AND d.apns_push_to_start_invalidated_at IS NULL
                       END)
               OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
      ) l ON true
      LEFT JOIN live_activities a ON a.user_id = u.user_id AND a.mini_app_id = p_mini_app AND a.status = 'active';
END
$$;
