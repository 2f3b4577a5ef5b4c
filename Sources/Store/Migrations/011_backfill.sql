-- Operator backfills (heraldctl backfill sends|users): the line keys that make a rerun
-- create nothing twice, a set-based recipient resolver for a whole batch of lines, the batch
-- enqueue from COPY-loaded staging tables, and the host API's user upsert as one function both the
-- API and the users backfill call.

-- One row per accepted line of a sends file, kept permanently: the same (partner, key) is never
-- enqueued twice, however often a file is rerun or run twice at once. `run_id` tells a key used
-- earlier in the same run (a duplicate line of the file: rejected) from one of an earlier run (a
-- rerun: counted as a duplicate).
CREATE TABLE backfill_keys (
    partner_id uuid NOT NULL,
    key        text NOT NULL,
    request_id uuid NOT NULL,
    run_id     uuid NOT NULL,
    line       integer NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (partner_id, key)
);

-- The resolution of herald_resolve_recipients (sql/007_edges.sql) for many lines at once: the
-- input is one row per identifier (its line, the partner's tenant and mini-app, 'e' or 'w', the
-- normalised identifier); the output the same four kinds of rows, each with its line. Planned once
-- per session (generic plan): every join is an index probe per input row.
CREATE FUNCTION herald_backfill_resolve(p_lines integer[], p_tenants text[], p_mini_apps text[], p_kinds text[],
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

-- The staging tables of one batch of a sends backfill, loaded with COPY by BackfillStore.enqueue
-- and emptied at each commit. Temporary: private to the session, never WAL-logged. Created once
-- per session (IF NOT EXISTS; its notice silenced), so the plans of herald_backfill_apply, cached
-- per session, stay valid from batch to batch.
CREATE FUNCTION herald_backfill_stage()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET client_min_messages = warning
AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_lines (
        line        integer NOT NULL,
        partner_id  uuid NOT NULL,
        key         text NOT NULL,
        request_id  uuid NOT NULL,
        created_at  timestamptz NOT NULL,
        mini_app_id text NOT NULL,
        title       text NOT NULL,
        body        text NOT NULL,
        deep_link   text,
        data        jsonb NOT NULL,
        send_at     timestamptz,
        ttl_seconds integer NOT NULL,
        expires_at  timestamptz NOT NULL,
        recipients  integer NOT NULL,
        suppressed  integer NOT NULL,
        missing     jsonb NOT NULL,
        deliveries  integer NOT NULL
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_deliveries (
        request_id  uuid NOT NULL,
        id          uuid NOT NULL,
        service     text NOT NULL,
        user_id     text NOT NULL,
        device_id   text NOT NULL,
        environment text NOT NULL,
        payload     text NOT NULL
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_senders (
        request_id uuid NOT NULL,
        user_id    text NOT NULL
    ) ON COMMIT DELETE ROWS;
END
$$;

-- Writes the staged batch: for each line whose (partner, key) is new, its key, its audit row in
-- push_requests (lane 1), its user_senders rows and its deliveries, as the intake's enqueue does
-- for one push (PushStore.enqueueSQL). The key goes first: a line whose key another run holds
-- (committed, or in flight: ON CONFLICT waits for it) writes nothing else.
-- Returns one row per line: 'accepted', 'duplicate' (the key was used by an earlier run) or
-- 'duplicate_key' (used earlier in this run, at `first_line`).
CREATE FUNCTION herald_backfill_apply(p_run uuid)
RETURNS TABLE (line integer, outcome text, first_line integer)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_accepted uuid[];
BEGIN
    -- In line order, so two runs of one file take the keys' locks in the same order.
    WITH written AS (
        INSERT INTO backfill_keys AS b (partner_id, key, request_id, run_id, line, created_at)
        SELECT l.partner_id, l.key, l.request_id, p_run, l.line, l.created_at
          FROM herald_backfill_lines l
         ORDER BY l.line
        ON CONFLICT (partner_id, key) DO NOTHING
        RETURNING b.request_id
    )
    SELECT coalesce(array_agg(written.request_id), '{}') INTO v_accepted FROM written;

    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body, deep_link, data,
                               send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    SELECT l.request_id, l.created_at, l.partner_id, l.mini_app_id, NULL, l.title, l.body, l.deep_link, l.data,
           l.send_at, l.ttl_seconds, l.expires_at, 1, l.recipients, l.deliveries, l.suppressed, l.missing
      FROM herald_backfill_lines l
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = l.request_id;

    -- Sorted, so two runs at once take the rows' locks in one order.
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    SELECT DISTINCT ON (s.user_id, l.mini_app_id) s.user_id, l.mini_app_id, l.created_at
      FROM herald_backfill_senders s
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = s.request_id
      JOIN herald_backfill_lines l ON l.request_id = s.request_id
     ORDER BY s.user_id, l.mini_app_id, l.created_at
    ON CONFLICT DO NOTHING;

    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id, device_id,
                            environment, payload, available_at, expires_at)
    SELECT x.id, x.request_id, l.created_at, l.partner_id, 1, x.service, x.user_id, x.device_id, x.environment,
           x.payload, coalesce(l.send_at, l.created_at), l.expires_at
      FROM herald_backfill_deliveries x
      JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = x.request_id
      JOIN herald_backfill_lines l ON l.request_id = x.request_id;

    RETURN QUERY
    SELECT l.line,
           CASE WHEN a.request_id IS NOT NULL THEN 'accepted'
                WHEN b.run_id = p_run THEN 'duplicate_key'
                ELSE 'duplicate' END,
           CASE WHEN a.request_id IS NULL AND b.run_id = p_run THEN b.line END
      FROM herald_backfill_lines l
      LEFT JOIN unnest(v_accepted) AS a (request_id) ON a.request_id = l.request_id
      LEFT JOIN backfill_keys b ON b.partner_id = l.partner_id AND b.key = l.key
     ORDER BY l.line;
END
$$;

-- The host API's PUT /api/internal/users/{userId}, in one place for the API
-- (DirectoryStore.putUser) and the users backfill: the tenant exists, the user is created or moved
-- to the tenant (its identifiers follow through ON UPDATE CASCADE), and its email and wallet sets
-- are replaced by the given ones (already normalised). An identifier another user of the tenant
-- holds raises unique_violation (409 identifier_taken), and the caller's transaction or
-- subtransaction undoes the rest. Returns whether the user was created.
CREATE FUNCTION herald_put_user(p_user text, p_tenant text, p_emails text[], p_wallets text[])
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_created boolean;
    v_owned   integer;
BEGIN
    INSERT INTO tenants (id) VALUES (p_tenant) ON CONFLICT DO NOTHING;
    INSERT INTO users AS u (id, tenant_id) VALUES (p_user, p_tenant)
    ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, updated_at = now()
    RETURNING xmax = 0 INTO v_created;

    DELETE FROM user_emails WHERE user_id = p_user AND email <> ALL(p_emails);
    IF cardinality(p_emails) > 0 THEN
        INSERT INTO user_emails (tenant_id, email, user_id) SELECT p_tenant, v, p_user FROM unnest(p_emails) AS v
        ON CONFLICT DO NOTHING;
        SELECT count(*) INTO v_owned FROM user_emails
         WHERE tenant_id = p_tenant AND user_id = p_user AND email = ANY(p_emails);
        IF v_owned <> cardinality(p_emails) THEN
            RAISE unique_violation USING MESSAGE = 'identifier_taken';
        END IF;
    END IF;

    DELETE FROM user_wallets WHERE user_id = p_user AND wallet <> ALL(p_wallets);
    IF cardinality(p_wallets) > 0 THEN
        INSERT INTO user_wallets (tenant_id, wallet, user_id) SELECT p_tenant, v, p_user FROM unnest(p_wallets) AS v
        ON CONFLICT DO NOTHING;
        SELECT count(*) INTO v_owned FROM user_wallets
         WHERE tenant_id = p_tenant AND user_id = p_user AND wallet = ANY(p_wallets);
        IF v_owned <> cardinality(p_wallets) THEN
            RAISE unique_violation USING MESSAGE = 'identifier_taken';
        END IF;
    END IF;
    RETURN v_created;
END
$$;

-- A batch of users-file lines, each in its own subtransaction: herald_put_user, then each of its
-- devices through herald_put_device (sql/007_edges.sql: tokens taken from any other device row).
-- A line another user's identifier blocks is rolled back alone and reported. Emails, wallets and
-- devices are flattened in line order; line i owns the slices starting at p_*_start[i].
CREATE FUNCTION herald_backfill_users(
    p_lines integer[], p_users text[], p_tenants text[],
    p_email_start integer[], p_email_count integer[], p_emails text[],
    p_wallet_start integer[], p_wallet_count integer[], p_wallets text[],
    p_device_start integer[], p_device_count integer[], p_device_ids text[], p_platforms text[],
    p_environments text[], p_bundles text[], p_apns text[], p_push_to_start text[], p_fcm text[])
RETURNS TABLE (line integer, outcome text, created boolean, devices integer)
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_created boolean;
    v_first   integer;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_lines), 0) LOOP
        BEGIN
            v_created := herald_put_user(
                p_users[i], p_tenants[i],
                coalesce(p_emails[p_email_start[i] : p_email_start[i] + p_email_count[i] - 1], '{}'),
                coalesce(p_wallets[p_wallet_start[i] : p_wallet_start[i] + p_wallet_count[i] - 1], '{}'));
            v_first := p_device_start[i];
            FOR j IN v_first .. v_first + p_device_count[i] - 1 LOOP
                PERFORM herald_put_device(p_users[i], p_device_ids[j], p_platforms[j], p_environments[j], p_bundles[j],
                                          p_apns[j], p_push_to_start[j], p_fcm[j]);
            END LOOP;
            line := p_lines[i]; outcome := 'ok'; created := v_created; devices := p_device_count[i];
        EXCEPTION WHEN unique_violation THEN
            line := p_lines[i]; outcome := 'identifier_taken'; created := false; devices := 0;
        END;
        RETURN NEXT;
    END LOOP;
END
$$;
