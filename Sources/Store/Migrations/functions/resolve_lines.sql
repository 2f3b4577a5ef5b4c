-- Resolves pushes' emails and wallets to their tenants' users (emails looked up in NFC), with the identifiers that
-- matched and the users who opted out of the push's mini-app, and each such user's devices with a live token: one
-- statement for many pushes, the lines of an intake batch (functions/intake_push.sql) or of a backfill
-- (Sources/Store/BackfillStore.swift), or for one (Sources/Store/PushStore.swift). Line i (1-based) has tenant
-- p_tenants[i] and mini-app p_mini_apps[i]; each email and wallet names its line (p_e_line, p_w_line). Every row
-- names its line; a device's row carries its token for its service and its app (bundle_id), which an intake's
-- notification hands to the worker. Every join is an index probe per identifier (a call per push cost each push the
-- call's own start). A single SQL statement without settings of its own, so Postgres inlines it into the calling
-- query and plans it there: herald_intake_push's generic plan, cached for its session; a plpgsql body cost a
-- one-push call more to enter, fill and sort its result than the query itself.
CREATE OR REPLACE FUNCTION herald_resolve_lines(p_tenants text[], p_mini_apps text[], p_e_line integer[],
                                                p_emails text[], p_w_line integer[], p_wallets text[])
RETURNS TABLE (line integer, kind text, ident text, user_id text, service text, environment text, opted_out boolean,
               token text, bundle_id text)
LANGUAGE sql STABLE
AS $$
    WITH ids AS (
        -- Emails are looked up in NFC: the intake sends them so, and a writer that did not is normalised here.
        SELECT r.line, 'e'::text AS kind, e.email AS ident, e.user_id
          FROM unnest(p_e_line, p_emails) AS r (line, ident)
          JOIN user_emails e
            ON e.tenant_id = p_tenants[r.line]
           AND e.email = CASE WHEN r.ident IS NFC NORMALIZED THEN r.ident ELSE normalize(r.ident, NFC) END
        UNION ALL
        SELECT r.line, 'w', w.wallet, w.user_id
          FROM unnest(p_w_line, p_wallets) AS r (line, ident)
          JOIN user_wallets w ON w.tenant_id = p_tenants[r.line] AND w.wallet = r.ident
    ), targets AS (
        SELECT u.line, u.user_id,
               EXISTS (SELECT 1 FROM opt_outs o WHERE o.user_id = u.user_id AND o.mini_app_id = p_mini_apps[u.line])
                   AS opted_out
          FROM (SELECT DISTINCT ids.line, ids.user_id FROM ids) AS u
    )
    SELECT ids.line, ids.kind, ids.ident, ids.user_id, NULL::text, NULL::text, NULL::boolean, NULL::text, NULL::text
      FROM ids
    UNION ALL
    SELECT t.line, 'u', NULL, t.user_id, NULL, NULL, t.opted_out, NULL, NULL FROM targets t
    UNION ALL
    SELECT t.line, 'd', d.device_id, d.user_id, CASE d.platform WHEN 'ios' THEN 'apns' ELSE 'fcm' END, d.environment,
           NULL, CASE d.platform WHEN 'ios' THEN d.apns_token ELSE d.fcm_token END, d.bundle_id
      FROM targets t JOIN devices d ON d.user_id = t.user_id
     WHERE NOT t.opted_out
       AND ((d.platform = 'ios' AND d.apns_token IS NOT NULL AND d.apns_token_invalidated_at IS NULL)
         OR (d.platform = 'android' AND d.fcm_token IS NOT NULL AND d.fcm_token_invalidated_at IS NULL))
$$;
