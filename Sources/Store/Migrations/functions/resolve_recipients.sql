-- Resolves a push's emails and wallets to the tenant's users (emails looked up in NFC), with the
-- identifiers that matched nobody and the users who opted out of the mini-app. A device's row carries its token for
-- its service and its app (bundle_id), which an intake's notification hands to the worker (functions/intake_push.sql).
CREATE OR REPLACE FUNCTION herald_resolve_recipients(p_tenant text, p_emails text[], p_wallets text[], p_mini_app text)
RETURNS TABLE (kind text, ident text, user_id text, service text, environment text, opted_out boolean, token text,
               bundle_id text)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    -- Already NFC when the intake sent them: one check of them all, joined by a character that composes with
    -- nothing (a statement only when some email is not). Reassigned in place so the query below stays the one
    -- Tests/StoreTests/QueryPlanTests.swift EXPLAINs.
    IF NOT array_to_string(p_emails, ',') IS NFC NORMALIZED THEN
        p_emails := ARRAY(SELECT CASE WHEN x IS NFC NORMALIZED THEN x ELSE normalize(x, NFC) END
                            FROM unnest(p_emails) AS x);
    END IF;
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
    SELECT ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean, NULL::text, NULL::text FROM ids
    UNION ALL
    SELECT 'u', NULL, t.user_id, NULL, NULL, t.opted_out, NULL, NULL FROM targets t
    UNION ALL
    SELECT 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment, NULL,
           CASE d.platform WHEN 'ios' THEN d.apns_token ELSE d.fcm_token END, d.bundle_id
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
END
$$;
