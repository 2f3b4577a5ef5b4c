-- The admin audit trail of partner changes (047_admin_audit.sql): what changed, never a key, its hash or the
-- webhook secret. One UPDATE may record several actions (a rotation and a field change).
CREATE OR REPLACE FUNCTION herald_partners_audit() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_changes jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM herald_admin_audit('partner.created', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'displayName', NEW.display_name, 'tenantId', NEW.tenant_id,
            'rateLimitPerMinute', NEW.rate_limit_per_minute, 'rateLimitPerDay', NEW.rate_limit_per_day,
            'iconUrl', NEW.icon_url, 'icon', NEW.icon_updated_at IS NOT NULL, 'webhookUrl', NEW.webhook_url,
            'sound', NEW.sound, 'allowTimeSensitive', NEW.allow_time_sensitive));
        RETURN NULL;
    END IF;
    IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
        PERFORM herald_admin_audit('partner.revoked', NEW.id, NEW.mini_app_id, '{}');
    END IF;
    IF OLD.suspended_at IS NULL AND NEW.suspended_at IS NOT NULL THEN
        PERFORM herald_admin_audit('partner.suspended', NEW.id, NEW.mini_app_id, '{}');
    ELSIF OLD.suspended_at IS NOT NULL AND NEW.suspended_at IS NULL THEN
        PERFORM herald_admin_audit('partner.resumed', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'suspendedSince', herald_iso8601(OLD.suspended_at)));
    END IF;
    IF NEW.key_hash IS DISTINCT FROM OLD.key_hash THEN
        PERFORM herald_admin_audit('partner.key_rotated', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'previousKeyValidUntil', herald_iso8601(NEW.previous_key_expires_at)));
    ELSIF OLD.previous_key_hash IS NOT NULL AND NEW.previous_key_hash IS NULL THEN
        PERFORM herald_admin_audit('partner.previous_key_ended', NEW.id, NEW.mini_app_id,
                                   jsonb_build_object('wasValidUntil', herald_iso8601(OLD.previous_key_expires_at)));
    END IF;
    -- A new URL's new secret is in the URL's change (partner.updated); the overlap it ends is recorded here.
    IF NEW.webhook_secret IS DISTINCT FROM OLD.webhook_secret AND NEW.webhook_secret IS NOT NULL
       AND NEW.webhook_url IS NOT DISTINCT FROM OLD.webhook_url THEN
        PERFORM herald_admin_audit('partner.webhook_secret_rotated', NEW.id, NEW.mini_app_id, jsonb_build_object(
            'previousSecretValidUntil', herald_iso8601(NEW.previous_webhook_secret_expires_at)));
    ELSIF OLD.previous_webhook_secret IS NOT NULL AND NEW.previous_webhook_secret IS NULL THEN
        PERFORM herald_admin_audit('partner.previous_webhook_secret_ended', NEW.id, NEW.mini_app_id,
                                   jsonb_build_object('wasValidUntil',
                                                      herald_iso8601(OLD.previous_webhook_secret_expires_at)));
    END IF;
    -- Each changed field, from and to (the icon's images by when they were set).
    SELECT coalesce(jsonb_object_agg(f.name, jsonb_build_object('from', o.fields -> f.col, 'to', n.fields -> f.col)),
                    '{}')
      INTO v_changes
      FROM (VALUES ('display_name', 'displayName'), ('rate_limit_per_minute', 'rateLimitPerMinute'),
                   ('rate_limit_per_day', 'rateLimitPerDay'), ('icon_url', 'iconUrl'), ('webhook_url', 'webhookUrl'),
                   ('sound', 'sound'), ('allow_time_sensitive', 'allowTimeSensitive')) AS f (col, name),
           (SELECT to_jsonb(OLD) AS fields) o, (SELECT to_jsonb(NEW) AS fields) n
     WHERE o.fields -> f.col IS DISTINCT FROM n.fields -> f.col;
    IF NEW.icon_updated_at IS DISTINCT FROM OLD.icon_updated_at THEN
        v_changes := v_changes || jsonb_build_object('iconUpdatedAt', jsonb_build_object(
            'from', herald_iso8601(OLD.icon_updated_at), 'to', herald_iso8601(NEW.icon_updated_at)));
    END IF;
    IF v_changes <> '{}' THEN
        PERFORM herald_admin_audit('partner.updated', NEW.id, NEW.mini_app_id, v_changes);
    END IF;
    RETURN NULL;
END
$$;
