-- The resolution of herald_resolve_recipients (functions/resolve_recipients.sql) for many lines at once:
-- the input is one row per identifier (its line, the partner's tenant and mini-app, 'e' or 'w', the
-- normalised identifier); the output the same four kinds of rows, each with its line. Planned once per
-- session (generic plan): every join is an index probe per input row.
CREATE OR REPLACE FUNCTION herald_backfill_resolve(p_lines integer[], p_tenants text[], p_mini_apps text[], p_kinds text[],
                                        p_idents text[])
RETURNS TABLE (line integer, kind text, ident text, user_id text, service text, environment text, opted_out boolean)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH req AS (
        SELECT r.line, r.tenant, r.mini_app, r.kind,
               CASE WHEN r.kind = 'e' AND r.ident IS NOT NFC NORMALIZED THEN normalize(r.ident, NFC) ELSE r.ident END
                   AS ident
          FROM unnest(p_lines, p_tenants, p_mini_apps, p_kinds, p_idents) AS r (line, tenant, mini_app, kind, ident)
    ), ids AS (
        SELECT r.line, 'e'::text AS kind, e.email AS ident, e.user_id, r.mini_app
          FROM req r JOIN user_emails e ON e.tenant_id = r.tenant AND e.email = r.ident
         WHERE r.kind = 'e'
        UNION ALL
        SELECT r.line, 'w', w.wallet, w.user_id, r.mini_app
          FROM req r JOIN user_wallets w ON w.tenant_id = r.tenant AND w.wallet = r.ident
         WHERE r.kind = 'w'
    ), targets AS (
        SELECT u.line, u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = u.mini_app) AS opted_out
          FROM (SELECT DISTINCT ids.line, ids.user_id, ids.mini_app FROM ids) AS u
    )
    SELECT ids.line, ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean FROM ids
    UNION ALL
    SELECT t.line, 'u', NULL, t.user_id, NULL, NULL, t.opted_out FROM targets t
    UNION ALL
    SELECT t.line, 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment,
           NULL
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL));
END
$$;
