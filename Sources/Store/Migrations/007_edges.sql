-- Edges of the directory: a device token belongs to one device, emails in one Unicode
-- form, and every queued delivery has an expiry.

-- A device token belongs to one device. The host registers the token a phone reports;
-- when the phone changed accounts (or the app was reinstalled under another user or tenant),
-- the token moves to the new device row and leaves the old one, so the old user, the old tenant
-- and the deliveries already queued for them no longer reach that phone.
--
-- Not a unique index: a registration must take the token rather than fail, and fixtures
-- (benchmarks, query-plan tests) load many rows sharing one token straight through SQL. The
-- registration path is made race-free by a transaction-scoped advisory lock per token instead
-- (herald_put_device below). Hash indexes: the registration finds the current holder of a token
-- with one probe, and an FCM token (up to 4,096 bytes) does not fit a btree entry.
CREATE INDEX devices_apns_token ON devices USING hash (apns_token) WHERE apns_token IS NOT NULL;
CREATE INDEX devices_push_to_start_token ON devices USING hash (apns_push_to_start_token)
    WHERE apns_push_to_start_token IS NOT NULL;
CREATE INDEX devices_fcm_token ON devices USING hash (fcm_token) WHERE fcm_token IS NOT NULL;

-- Rows that already share a token: the most recently registered one keeps it.
UPDATE devices d SET apns_token = NULL, apns_token_invalidated_at = NULL
 WHERE d.apns_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.apns_token = d.apns_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));
UPDATE devices d SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL
 WHERE d.apns_push_to_start_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.apns_push_to_start_token = d.apns_push_to_start_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));
UPDATE devices d SET fcm_token = NULL, fcm_token_invalidated_at = NULL
 WHERE d.fcm_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.fcm_token = d.fcm_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));

-- Creates or updates a device and takes each of its tokens from any other device row (any user,
-- any tenant), in one transaction. Returns whether the row was created and how many tokens were
-- taken from other rows.
--
-- Race-free: each token is locked (advisory, transaction-scoped, in sorted order so two
-- registrations cannot deadlock) before its holder is looked up. Each statement of a plpgsql
-- function takes a new snapshot, so a registration that waited for the lock sees the row the
-- other one committed, and takes the token from it: of two concurrent registrations of one
-- token, the one that commits last holds it, and only it.
--
-- What happens to a delivery already queued for the old row: the worker's claim
-- (herald_claim_deliveries, sql/006_worker.sql) reads the token of the delivery's own device row
-- (user_id, device_id) at claim time; that row's token is now NULL, so its verdict is
-- 'token_invalid' and it is finished without a send (and without invalidating anything, as no
-- token was used). It can never pick up the new owner's row. herald_resolve_recipients only
-- returns devices whose token is not NULL, so new pushes to the old user find no device.
--
-- A token that changes clears its invalidation; the same token re-registered stays invalid.
CREATE FUNCTION herald_put_device(p_user text, p_device text, p_platform text, p_environment text, p_bundle text,
                                  p_apns text, p_push_to_start text, p_fcm text)
RETURNS TABLE (created boolean, taken integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_token   text;
    v_created boolean;
    v_taken   integer := 0;
    v_rows    integer;
BEGIN
    FOR v_token IN SELECT DISTINCT t FROM unnest(ARRAY[p_apns, p_push_to_start, p_fcm]) AS t
                    WHERE t IS NOT NULL ORDER BY t LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_token, 7307));
    END LOOP;

    IF p_apns IS NOT NULL THEN
        UPDATE devices SET apns_token = NULL, apns_token_invalidated_at = NULL, updated_at = now()
         WHERE apns_token = p_apns AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_push_to_start IS NOT NULL THEN
        UPDATE devices SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL,
                           updated_at = now()
         WHERE apns_push_to_start_token = p_push_to_start AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;
    IF p_fcm IS NOT NULL THEN
        UPDATE devices SET fcm_token = NULL, fcm_token_invalidated_at = NULL, updated_at = now()
         WHERE fcm_token = p_fcm AND (user_id, device_id) <> (p_user, p_device);
        GET DIAGNOSTICS v_rows = ROW_COUNT;
        v_taken := v_taken + v_rows;
    END IF;

    INSERT INTO devices AS d (user_id, device_id, platform, environment, bundle_id, apns_token,
                              apns_push_to_start_token, fcm_token)
    VALUES (p_user, p_device, p_platform, p_environment, p_bundle, p_apns, p_push_to_start, p_fcm)
    ON CONFLICT (user_id, device_id) DO UPDATE SET
        platform = EXCLUDED.platform,
        environment = EXCLUDED.environment,
        bundle_id = EXCLUDED.bundle_id,
        apns_token = EXCLUDED.apns_token,
        apns_token_invalidated_at = CASE WHEN d.apns_token IS DISTINCT FROM EXCLUDED.apns_token
            THEN NULL ELSE d.apns_token_invalidated_at END,
        apns_push_to_start_token = EXCLUDED.apns_push_to_start_token,
        apns_push_to_start_invalidated_at = CASE
            WHEN d.apns_push_to_start_token IS DISTINCT FROM EXCLUDED.apns_push_to_start_token
            THEN NULL ELSE d.apns_push_to_start_invalidated_at END,
        fcm_token = EXCLUDED.fcm_token,
        fcm_token_invalidated_at = CASE WHEN d.fcm_token IS DISTINCT FROM EXCLUDED.fcm_token
            THEN NULL ELSE d.fcm_token_invalidated_at END,
        updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    RETURN QUERY SELECT v_created, v_taken;
END
$$;

-- Emails in one form: the intake stores and looks up emails lower-cased and in Unicode NFC
-- (Identifiers.normalizedEmail). Postgres compares bytes, so SQL applies NFC as well: to the rows
-- stored before (a decomposed "é" would never have matched a composed one), to every row written
-- from now on by any writer (the trigger), and to the emails a push looks up (the resolver).
-- Lower-casing stays the intake's alone: Postgres' lower() depends on the database's locale and
-- could disagree with Swift's Unicode case mapping, NFC does not.
DELETE FROM user_emails e
 USING (SELECT ctid AS row_id,
               row_number() OVER (PARTITION BY tenant_id, normalize(email, NFC)
                                  ORDER BY (email IS NFC NORMALIZED) DESC, email) AS rank
          FROM user_emails
         WHERE (tenant_id, normalize(email, NFC)) IN
               (SELECT tenant_id, normalize(email, NFC) FROM user_emails WHERE email IS NOT NFC NORMALIZED)) x
 WHERE e.ctid = x.row_id AND x.rank > 1;
UPDATE user_emails SET email = normalize(email, NFC) WHERE email IS NOT NFC NORMALIZED;

CREATE FUNCTION herald_email_nfc() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email IS NOT NFC NORMALIZED THEN
        NEW.email := normalize(NEW.email, NFC);
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER user_emails_nfc BEFORE INSERT OR UPDATE OF email ON user_emails
    FOR EACH ROW EXECUTE FUNCTION herald_email_nfc();

-- The resolver of sql/005_push_functions.sql, unchanged but for the NFC of the looked-up emails.
CREATE OR REPLACE FUNCTION herald_resolve_recipients(p_tenant text, p_emails text[], p_wallets text[], p_mini_app text)
RETURNS TABLE (kind text, ident text, user_id text, service text, environment text, opted_out boolean)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    -- Already NFC when the intake sent them: a cheap check per email. (Reassigned in place so the
    -- query below stays the one Tests/StoreTests/QueryPlanTests.swift EXPLAINs.)
    p_emails := ARRAY(SELECT CASE WHEN x IS NFC NORMALIZED THEN x ELSE normalize(x, NFC) END
                        FROM unnest(p_emails) AS x);
    RETURN QUERY
    WITH ids AS (
        SELECT 'e'::text AS kind, e.email AS ident, e.user_id FROM user_emails e
         WHERE e.tenant_id = p_tenant AND e.email = ANY(p_emails)
        UNION ALL
        SELECT 'w', w.wallet, w.user_id FROM user_wallets w
         WHERE w.tenant_id = p_tenant AND w.wallet = ANY(p_wallets)
    ), targets AS (
        SELECT u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_app) AS opted_out
          FROM (SELECT DISTINCT ids.user_id FROM ids) AS u
    )
    SELECT ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean FROM ids
    UNION ALL
    SELECT 'u', NULL, t.user_id, NULL, NULL, t.opted_out FROM targets t
    UNION ALL
    SELECT 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment, NULL
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
END
$$;

-- Every delivery has an expiry from now on (the intake sets it from ttlSeconds or
-- HERALD_DEFAULT_TTL_SECONDS); rows queued before without one get the default 28 days
-- from when they were due, so the worker never sends apns-expiration 0 for them. (The audit
-- rows in push_requests keep their NULL ttl_seconds: history, and too large to rewrite.)
UPDATE deliveries SET expires_at = available_at + interval '28 days' WHERE expires_at IS NULL;

-- A delivery's environment is one the worker knows: an unknown one must never fall through to
-- production (devices already has this CHECK; the outbox copies the device's value). NOT VALID
-- then VALIDATE: the check of existing rows does not block writers of the hot table.
ALTER TABLE deliveries ADD CONSTRAINT deliveries_environment
    CHECK (environment IN ('production', 'sandbox')) NOT VALID;
ALTER TABLE deliveries VALIDATE CONSTRAINT deliveries_environment;
