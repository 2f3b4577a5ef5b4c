-- The host API's device registration: creates or updates a user's device, takes its tokens from any
-- other device row that held them, clears the invalidations of the tokens it carries (a PUT carries all
-- of a device's tokens: one it leaves out is removed, a template's push-to-start token included) and
-- records its time. p_template_tokens: {"<template>": "<push-to-start token>", ...} or NULL.
CREATE OR REPLACE FUNCTION herald_put_device(p_user text, p_device text, p_platform text, p_environment text,
                                             p_bundle text, p_apns text, p_push_to_start text, p_fcm text,
                                             p_template_tokens jsonb)
RETURNS TABLE (created boolean, taken integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_token     text;
    v_created   boolean;
    v_taken     integer := 0;
    v_rows      integer;
    v_templates text[] := ARRAY(SELECT jsonb_object_keys(coalesce(p_template_tokens, '{}')));
    v_starts    text[] := ARRAY(SELECT value FROM jsonb_each_text(coalesce(p_template_tokens, '{}')));
BEGIN
    FOR v_token IN SELECT DISTINCT t FROM unnest(ARRAY[p_apns, p_push_to_start, p_fcm] || v_starts) AS t
                    WHERE t IS NOT NULL ORDER BY t LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_token, 7307));
    END LOOP;

    IF p_apns IS NOT NULL THEN
        UPDATE devices SET apns_token = NULL, apns_token_invalidated_at = NULL, apns_token_invalid_reason = NULL,
                           updated_at = now()
         WHERE apns_token = p_apns AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    -- A push-to-start token, whether registered for every template or for one, belongs to one device.
    IF p_push_to_start IS NOT NULL OR cardinality(v_starts) > 0 THEN
        UPDATE devices SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL,
                           apns_push_to_start_invalid_reason = NULL, updated_at = now()
         WHERE apns_push_to_start_token = ANY (array_append(v_starts, p_push_to_start))
           AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
        DELETE FROM device_push_to_start_tokens
         WHERE token = ANY (array_append(v_starts, p_push_to_start)) AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_fcm IS NOT NULL THEN
        UPDATE devices SET fcm_token = NULL, fcm_token_invalidated_at = NULL, fcm_token_invalid_reason = NULL,
                           updated_at = now()
         WHERE fcm_token = p_fcm AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;

    INSERT INTO devices AS d (user_id, device_id, platform, environment, bundle_id, apns_token,
                              apns_push_to_start_token, fcm_token, registered_at)
    VALUES (p_user, p_device, p_platform, p_environment, p_bundle, p_apns, p_push_to_start, p_fcm, now())
    ON CONFLICT (user_id, device_id) DO UPDATE SET
        platform = EXCLUDED.platform,
        environment = EXCLUDED.environment,
        bundle_id = EXCLUDED.bundle_id,
        apns_token = EXCLUDED.apns_token,
        apns_token_invalidated_at = NULL,
        apns_token_invalid_reason = NULL,
        apns_push_to_start_token = EXCLUDED.apns_push_to_start_token,
        apns_push_to_start_invalidated_at = NULL,
        apns_push_to_start_invalid_reason = NULL,
        fcm_token = EXCLUDED.fcm_token,
        fcm_token_invalidated_at = NULL,
        fcm_token_invalid_reason = NULL,
        registered_at = now(),
        updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    DELETE FROM device_push_to_start_tokens
     WHERE user_id = p_user AND device_id = p_device AND template <> ALL (v_templates);
    INSERT INTO device_push_to_start_tokens (user_id, device_id, template, token)
    SELECT p_user, p_device, t.key, t.value FROM jsonb_each_text(coalesce(p_template_tokens, '{}')) AS t
    ON CONFLICT (user_id, device_id, template) DO UPDATE SET
        token = EXCLUDED.token, invalidated_at = NULL, invalid_reason = NULL;

    RETURN QUERY SELECT v_created, v_taken;
END
$$;
