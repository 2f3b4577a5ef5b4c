-- One row of the admin audit trail (047_admin_audit.sql), its actor from the transaction's settings.
CREATE OR REPLACE FUNCTION herald_admin_audit(p_action text, p_partner uuid, p_mini_app text, p_detail jsonb)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
    v_actor text := nullif(current_setting('herald.actor', true), '');
BEGIN
    INSERT INTO admin_audit (actor, actor_detail, client, action, partner_id, mini_app_id, detail)
    VALUES (coalesce(v_actor, 'database'),
            CASE WHEN v_actor IS NULL THEN current_user::text
                 ELSE nullif(current_setting('herald.actor_detail', true), '') END,
            nullif(current_setting('herald.client', true), ''),
            p_action, p_partner, p_mini_app, coalesce(p_detail, '{}'));
END
$$;
