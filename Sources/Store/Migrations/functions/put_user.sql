-- The host API's PUT /api/internal/users/{userId}, in one place for the API
-- (DirectoryStore.putUser) and the users backfill: the tenant exists, the user is created or moved
-- to the tenant (its identifiers follow through ON UPDATE CASCADE), and its email and wallet sets
-- are replaced by the given ones (already normalised). An identifier another user of the tenant
-- holds raises unique_violation (409 identifier_taken), and the caller's transaction or
-- subtransaction undoes the rest. The user's guards (sql/051_user_guards.sql) are replaced too, unless
-- p_keep_guards (a users-file line without them): a time zone Postgres does not know raises
-- invalid_parameter_value (422 unknown_time_zone) before anything is written. When the guards change, the rows
-- held for the old quiet hours are due at once (by deliveries_held_user, sql/052_user_guards_visible.sql) and the
-- workers are told: the claim judges them by the new ones. The user's locale (sql/063_user_locale.sql, a canonical
-- BCP 47 tag) is set to p_locale (NULL clears it) when p_set_locale, else kept (a PUT without `locale`, a users-file
-- line). Returns whether the user was created and the locale it has now.
CREATE OR REPLACE FUNCTION herald_put_user(p_user text, p_tenant text, p_emails text[], p_wallets text[],
                                           p_time_zone text DEFAULT NULL, p_quiet_start time DEFAULT NULL,
                                           p_quiet_end time DEFAULT NULL, p_keep_guards boolean DEFAULT false,
                                           p_locale text DEFAULT NULL, p_set_locale boolean DEFAULT false,
                                           OUT created boolean, OUT locale text)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_created boolean;
    v_owned   integer;
    -- The guards before this PUT (NULL for a new user); locked, so two PUTs of one user compare in turn.
    v_before  record;
    v_released integer;
BEGIN
    -- Full IANA names only (pg_timezone_names), not the abbreviations or POSIX offsets AT TIME ZONE also takes.
    IF p_time_zone IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_timezone_names z WHERE z.name = p_time_zone) THEN
        RAISE invalid_parameter_value USING MESSAGE = 'invalid_time_zone';
    END IF;
    INSERT INTO tenants (id) VALUES (p_tenant) ON CONFLICT DO NOTHING;
    SELECT u.time_zone, u.quiet_start, u.quiet_end INTO v_before FROM users u WHERE u.id = p_user FOR UPDATE;
    INSERT INTO users AS u (id, tenant_id, time_zone, quiet_start, quiet_end, locale)
    VALUES (p_user, p_tenant, CASE WHEN NOT p_keep_guards THEN p_time_zone END,
            CASE WHEN NOT p_keep_guards THEN p_quiet_start END, CASE WHEN NOT p_keep_guards THEN p_quiet_end END,
            CASE WHEN p_set_locale THEN p_locale END)
    ON CONFLICT (id) DO UPDATE
       SET tenant_id = EXCLUDED.tenant_id,
           time_zone = CASE WHEN p_keep_guards THEN u.time_zone ELSE EXCLUDED.time_zone END,
           quiet_start = CASE WHEN p_keep_guards THEN u.quiet_start ELSE EXCLUDED.quiet_start END,
           quiet_end = CASE WHEN p_keep_guards THEN u.quiet_end ELSE EXCLUDED.quiet_end END,
           locale = CASE WHEN p_set_locale THEN EXCLUDED.locale ELSE u.locale END,
           updated_at = now()
    RETURNING xmax = 0, u.locale INTO v_created, locale;
    created := v_created;

    IF NOT v_created AND NOT p_keep_guards
       AND (v_before.time_zone, v_before.quiet_start, v_before.quiet_end)
           IS DISTINCT FROM (p_time_zone, p_quiet_start, p_quiet_end) THEN
        UPDATE deliveries d SET available_at = now()
         WHERE d.user_id = p_user AND d.last_error = 'quiet_hours' AND d.state = 'pending'
           AND d.available_at > now();
        GET DIAGNOSTICS v_released = ROW_COUNT;
        IF v_released > 0 THEN
            PERFORM pg_notify('herald_deliveries', '');
        END IF;
    END IF;

    DELETE FROM user_emails WHERE user_id = p_user AND email <> ALL(p_emails);
    INSERT INTO user_emails (tenant_id, email, user_id) SELECT p_tenant, v, p_user FROM unnest(p_emails) AS v
    ON CONFLICT DO NOTHING;
    DELETE FROM user_wallets WHERE user_id = p_user AND wallet <> ALL(p_wallets);
    INSERT INTO user_wallets (tenant_id, wallet, user_id) SELECT p_tenant, v, p_user FROM unnest(p_wallets) AS v
    ON CONFLICT DO NOTHING;
    -- An identifier the user does not hold now is another user's (or given twice).
    SELECT (SELECT count(*) FROM user_emails
             WHERE tenant_id = p_tenant AND user_id = p_user AND email = ANY(p_emails))
         + (SELECT count(*) FROM user_wallets
             WHERE tenant_id = p_tenant AND user_id = p_user AND wallet = ANY(p_wallets))
      INTO v_owned;
    IF v_owned <> cardinality(p_emails) + cardinality(p_wallets) THEN
        RAISE unique_violation USING MESSAGE = 'identifier_taken';
    END IF;
END
$$;
