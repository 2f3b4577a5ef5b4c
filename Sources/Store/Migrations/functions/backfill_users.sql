-- A batch of users-file lines, each in its own subtransaction: herald_put_user, then each of its
-- devices through herald_put_device (functions/put_device.sql: tokens taken from any other device row).
-- A line another user's identifier blocks, or whose time zone Postgres does not know, is rolled back alone and
-- reported. A line's guards (p_guarded) replace the user's as a PUT does; a line without them (p_guarded false)
-- keeps the user's time zone and quiet hours. Emails, wallets and
-- devices are flattened in line order; line i owns the slices starting at p_*_start[i]. A device's
-- p_template_tokens is its per-template push-to-start tokens as a JSON object, or NULL.
CREATE OR REPLACE FUNCTION herald_backfill_users(
    p_lines integer[], p_users text[], p_tenants text[],
    p_email_start integer[], p_email_count integer[], p_emails text[],
    p_wallet_start integer[], p_wallet_count integer[], p_wallets text[],
    p_device_start integer[], p_device_count integer[], p_device_ids text[], p_platforms text[],
    p_environments text[], p_bundles text[], p_apns text[], p_push_to_start text[], p_fcm text[],
    p_template_tokens text[], p_guarded boolean[], p_time_zones text[], p_quiet_starts time[],
    p_quiet_ends time[])
RETURNS TABLE (line integer, outcome text, created boolean, devices integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_created boolean;
    v_first   integer;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_lines), 0) LOOP
        BEGIN
            -- A line keeps the user's locale (it has no field for one).
            SELECT p.created INTO v_created FROM herald_put_user(
                p_users[i], p_tenants[i],
                coalesce(p_emails[p_email_start[i] : p_email_start[i] + p_email_count[i] - 1], '{}'),
                coalesce(p_wallets[p_wallet_start[i] : p_wallet_start[i] + p_wallet_count[i] - 1], '{}'),
                p_time_zones[i], p_quiet_starts[i], p_quiet_ends[i], NOT p_guarded[i]) AS p;
            v_first := p_device_start[i];
            FOR j IN v_first .. v_first + p_device_count[i] - 1 LOOP
                PERFORM herald_put_device(p_users[i], p_device_ids[j], p_platforms[j], p_environments[j], p_bundles[j],
                                          p_apns[j], p_push_to_start[j], p_fcm[j],
                                          p_template_tokens[j]::jsonb);
            END LOOP;
            line := p_lines[i]; outcome := 'ok'; created := v_created; devices := p_device_count[i];
        EXCEPTION
            WHEN unique_violation THEN
                line := p_lines[i]; outcome := 'identifier_taken'; created := false; devices := 0;
            WHEN invalid_parameter_value THEN
                line := p_lines[i]; outcome := 'unknown_time_zone'; created := false; devices := 0;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;
