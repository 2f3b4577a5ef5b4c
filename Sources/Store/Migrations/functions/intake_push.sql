-- The intake's push in one statement and one transaction, for a batch of pushes (group commit;
-- Sources/Store/IntakeWriter.swift): for each push in order, the stored Idempotency-Key response
-- ('replay'), the recipients' resolution, a rate-limit slot ('limited'), then its key, audit row,
-- senders and deliveries ('accepted'). The intake renders a few delivery slots up front, each signed for the user it
-- expects the push to resolve to (p_s_user; Sources/HeraldCore/PushPreparation.swift,
-- Sources/Intake/RecipientCache.swift): a device takes a slot only when its user is the slot's, so the resolution here
-- decides who gets what, never the intake's guess. A push with localized variants has each slot rendered in the
-- variant its user's locale matched as the intake last saw it (p_s_locale, '' for none): a device takes such a slot
-- only while its user's stored locale is still that one, so a locale the host changed since is never sent the old
-- variant. A push with a device no slot fits goes back as 'render', with who its identifiers resolved to and their
-- locales.
-- The rate windows stay exact across processes: the per-partner advisory lock of herald_rate_reserve
-- (functions/rate_reserve.sql) is held until the batch commits, partners locked in uuid order. Their
-- sums are the running ones of functions/rate_counts.sql, written back with the batch's counts.
-- Most calls carry one push: a statement's fixed cost (starting its plan) is then most of the call's,
-- so the steps a batch does not need are skipped and the writes are one statement.
CREATE OR REPLACE FUNCTION herald_intake_push(
    p_partner uuid[], p_per_minute integer[], p_per_day integer[], p_tenant text[], p_mini_app text[],
    p_now timestamptz[], p_key text[], p_body_hash text[], p_request uuid[], p_created timestamptz[],
    p_title text[], p_body text[], p_deep_link text[], p_data text[], p_send_at timestamptz[],
    p_ttl integer[],
    p_e_line integer[], p_emails text[], p_e_json text[],
    p_w_line integer[], p_wallets text[], p_w_json text[],
    p_s_end integer[], p_delivery uuid[], p_apns text[], p_fcm text[], p_s_user text[], p_notify text,
    p_lease text DEFAULT NULL, p_lease_seconds integer DEFAULT NULL, p_lease_listener integer DEFAULT NULL,
    p_interruption text[] DEFAULT NULL, p_collapse text[] DEFAULT NULL, p_s_locale text[] DEFAULT NULL)
RETURNS TABLE (r_item integer, r_outcome text, r_body_hash text, r_response text, r_status integer,
               r_minute_count integer, r_minute_oldest bigint, r_day_count integer, r_day_oldest bigint,
               r_now_seconds bigint, r_deliveries integer, r_resolved text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
-- Never JIT: the resolution's generic plan is estimated at ~60,000 (its function scans count 1,000 rows each), within
-- reach of jit_above_cost, and one JIT compilation costs ~30 ms against a call's ~1 ms (the intake's sessions keep
-- Postgres' default, jit on).
SET jit = off
AS $$
DECLARE
    n integer := cardinality(p_partner);
    i integer;
    j integer;
    rec record;
    -- Arrays start NULL unless a count or step 4's walk needs every element: assigning an element creates or
    -- extends one, and a missing element reads NULL (each initializer is an expression compiled on every call).
    -- The stored answers found up front (step 1), per push.
    st_hash text[];
    st_resp text[];
    st_status integer[];
    -- The resolution and the would-be answer (step 2), per push.
    rs_users integer[] := array_fill(0, ARRAY[n]);
    rs_suppressed integer[] := array_fill(0, ARRAY[n]);
    rs_devices integer[] := array_fill(0, ARRAY[n]);
    rs_missing text[];
    rs_response text[];
    -- A 'render' push's identifiers, their users and those users' locales, a JSON array of
    -- [kind, identifier, user, locale].
    rs_resolved text[];
    -- What the resolution found, one element per row: devices (push, slot, its delivery id, user, device, service,
    -- environment, and the row as a leased notification carries it), users (push, user) and identifiers (push, 'e'
    -- or 'w', identifier, user).
    d_push integer[];
    d_id uuid[];
    d_user text[];
    d_device text[];
    d_service text[];
    d_env text[];
    d_payload text[];
    d_row text[];
    u_push integer[];
    u_user text[];
    f_push integer[];
    f_kind text[];
    f_ident text[];
    f_user text[];
    -- The device being placed: its push, user, rank among that user's devices in the push, and slot.
    dev_line integer;
    dev_user text;
    dev_rank integer;
    dev_slot integer;
    -- The slots' users and their stored locales ('' for none), read once when a push of the batch has variants.
    lc_user text[];
    lc_locale text[];
    missing text;
    -- The pushes in the order step 3 takes them (a statement only for a batch of several).
    ord integer[];
    -- The outcome (step 3; 'render' already in step 2), per push.
    o_outcome text[];
    o_hash text[];
    o_resp text[];
    o_status integer[];
    o_mc integer[];
    o_mo bigint[];
    o_dc integer[];
    o_do bigint[];
    o_now bigint[];
    dup_of integer[] := array_fill(NULL::integer, ARRAY[n]);
    -- The current partner's windows, and what each partner locked counted.
    cur uuid;
    cur_at integer := 0;
    minute_count integer;
    minute_oldest bigint;
    day_count integer;
    day_oldest bigint;
    -- Whether the current partner's oldest buckets were read (only a refusal needs them).
    oldest_read boolean;
    now_s bigint;
    keys text[];
    key_items integer[];
    b_partner uuid[];
    b_now bigint[];
    b_counted integer[];
    b_minute integer[];
    b_day integer[];
    b_of integer[];
    acc integer[];
    lost integer[];
    -- When each accepted push's deliveries are due (its sendAt, or its acceptance), and whether they are due now.
    w_due timestamptz[];
    -- Per push, its collapse id (functions/collapse_id.sql) when it has a collapse key (p_collapse); NULL: none has.
    w_collapse text[] := CASE WHEN p_collapse IS NOT NULL THEN
        ARRAY(SELECT herald_collapse_id(x.m, x.k) FROM unnest(p_mini_app, p_collapse) WITH ORDINALITY AS x (m, k, o)
               ORDER BY x.o) END;
    w_now boolean[];
    written bigint;
    -- The accepted deliveries due now, their ids and their rows (step 6), and whether step 5 writes them leased:
    -- the rows of the last notification, the notifications before it (rows that did not fit one, and 'leased:' the
    -- ids of a push whose rows alone do not fit), and one push's rows.
    due_count integer := 0;
    due_ids text;
    due_rows text;
    due_notes text[];
    push_ids text;
    push_rows text;
    note text;
    leasing boolean := false;
    -- Whether any push of the batch carries an Idempotency-Key (steps 1 and 4 are for those).
    keyed boolean := cardinality(array_remove(p_key, NULL)) > 0;
BEGIN
    -- 1. The stored answers of the batch's keys (within their 24 hours), in one probe each.
    IF keyed THEN
        FOR rec IN
            SELECT x.o, k.body_hash, k.response, k.status
              FROM unnest(p_partner, p_key, p_now) WITH ORDINALITY AS x (p, k, t, o)
              JOIN idempotency_keys k ON k.partner_id = x.p AND k.key = x.k AND k.created_at > x.t - interval '24 hours'
        LOOP
            st_hash[rec.o] := rec.body_hash;
            st_resp[rec.o] := rec.response;
            st_status[rec.o] := rec.status;
        END LOOP;
    END IF;

    -- Only a batch with localized pushes reads locales: one probe of the users' primary key per slot user.
    IF p_s_locale IS NOT NULL THEN
        SELECT array_agg(u.id), array_agg(coalesce(u.locale, '')) INTO lc_user, lc_locale
          FROM users u WHERE u.id = ANY (p_s_user);
    END IF;

    -- 2. Every other push's recipients, in one statement for the whole batch (functions/resolve_lines.sql), and the
    --    answer it would get. The rows are sorted into arrays by this loop, not by aggregates: starting the
    --    aggregates' plan cost a one-push batch more than its few rows cost the loop. A push whose stored answer
    --    was found is resolved too, and its rows skipped. A push's devices take its slots in (user, device) order,
    --    each the next slot signed for its own user.
    FOR rec IN
        SELECT r.line AS i, r.kind, r.ident, r.user_id, r.service, r.environment, r.opted_out, r.token, r.bundle_id
          FROM herald_resolve_lines(p_tenant, p_mini_app, p_e_line, p_emails, p_w_line, p_wallets) AS r
         WHERE st_hash[r.line] IS NULL
         ORDER BY r.line, r.kind, r.user_id, r.ident
    LOOP
        CASE rec.kind
        WHEN 'd' THEN
            -- A push's devices come first: one that no slot of its user is left for sends the push back as 'render',
            -- and the rest of its devices are not needed (its identifiers are, for the answer).
            IF o_outcome[rec.i] = 'render' THEN
                CONTINUE;
            END IF;
            rs_devices[rec.i] := rs_devices[rec.i] + 1;
            -- A user's devices are consecutive (the rows come in (user, device) order): the k-th takes the k-th slot
            -- signed for that user, within the push's slots.
            IF rec.i = dev_line AND rec.user_id = dev_user THEN
                dev_rank := dev_rank + 1;
            ELSE
                dev_line := rec.i;
                dev_user := rec.user_id;
                dev_rank := 1;
            END IF;
            dev_slot := coalesce(p_s_end[rec.i - 1], 0)
                + (array_positions(p_s_user[coalesce(p_s_end[rec.i - 1], 0) + 1:p_s_end[rec.i]],
                                   rec.user_id))[dev_rank];
            IF dev_slot IS NULL THEN
                o_outcome[rec.i] := 'render';
                CONTINUE;
            END IF;
            -- A slot of a localized push only while its user's locale is the one it was rendered for. Nested, so a
            -- batch without such a push never compiles the comparison; a slot of a push without variants has no
            -- locale (NULL), and any device of its user takes it.
            IF p_s_locale IS NOT NULL THEN
                IF p_s_locale[dev_slot] <> coalesce(lc_locale[array_position(lc_user, rec.user_id)],
                                                    p_s_locale[dev_slot]) THEN
                    o_outcome[rec.i] := 'render';
                    CONTINUE;
                END IF;
            END IF;
            d_push := d_push || rec.i;
            d_id := d_id || p_delivery[dev_slot];
            d_user := d_user || rec.user_id;
            d_device := d_device || rec.ident;
            d_service := d_service || rec.service;
            d_env := d_env || rec.environment;
            d_payload := d_payload || CASE rec.service WHEN 'apns' THEN p_apns[dev_slot] ELSE p_fcm[dev_slot] END;
            -- The row whole, as the worker's read would return it once leased (DeliveryStore.leasedRows): fields split
            -- by U+001F, rows by U+001E, neither of which JSON text, a token, an id or a timestamp contains; times as
            -- the intake's session writes them (TimeZone UTC, Sources/Postgres/PostgresConnectionOptions.swift). Built
            -- here, in one expression, for step 6 to pick: each expression of a call is compiled once a transaction,
            -- at a cost that grows with its nodes.
            d_row := d_row || array_to_string(ARRAY[
                p_delivery[dev_slot]::text, rec.service, rec.environment,
                herald_push_expiry(coalesce(p_send_at[rec.i], p_created[rec.i]), p_ttl[rec.i])::text, rec.token,
                rec.bundle_id, p_partner[rec.i]::text,
                coalesce(p_send_at[rec.i], p_created[rec.i])::text, w_collapse[rec.i],
                CASE rec.service WHEN 'apns' THEN p_apns[dev_slot] ELSE p_fcm[dev_slot] END], chr(31), '');
        WHEN 'u' THEN
            rs_users[rec.i] := rs_users[rec.i] + 1;
            IF rec.opted_out THEN
                rs_suppressed[rec.i] := rs_suppressed[rec.i] + 1;
            END IF;
            u_push := u_push || rec.i;
            u_user := u_user || rec.user_id;
        ELSE
            f_push := f_push || rec.i;
            f_kind := f_kind || rec.kind;
            f_ident := f_ident || rec.ident;
            f_user := f_user || rec.user_id;
        END CASE;
    END LOOP;
    -- The identifiers that matched nobody, in request order from their JSON forms (a statement only for
    -- a push that has some), and the answer. A push going back as 'render' gets who its identifiers resolved to
    -- instead: the intake renders slots for those users and sends it again, or renders every device itself.
    FOR i IN 1..n LOOP
        IF st_hash[i] IS NOT NULL THEN
            CONTINUE;
        END IF;
        IF o_outcome[i] = 'render' THEN
            SELECT coalesce(json_agg(json_build_array(f.k, f.v, f.u, (SELECT u.locale FROM users u WHERE u.id = f.u))),
                            '[]')::text INTO missing
              FROM unnest(f_push, f_kind, f_ident, f_user) AS f (p, k, v, u)
             WHERE f.p = i;
            rs_resolved[i] := missing;
            CONTINUE;
        END IF;
        IF coalesce(cardinality(array_positions(f_push, i)), 0)
           = cardinality(array_positions(p_e_line, i)) + cardinality(array_positions(p_w_line, i)) THEN
            rs_missing[i] := '{"emails":[],"wallets":[]}';
        ELSE
            SELECT '{"emails":[' || coalesce(string_agg(x.j, ',' ORDER BY x.o) FILTER (WHERE x.k = 'e'), '')
                   || '],"wallets":[' || coalesce(string_agg(x.j, ',' ORDER BY x.o) FILTER (WHERE x.k = 'w'), '') || ']}'
              INTO missing
              FROM (SELECT 'e' AS k, e.v, e.j, e.o
                      FROM unnest(p_emails, p_e_json, p_e_line) WITH ORDINALITY AS e (v, j, l, o)
                     WHERE e.l = i
                    UNION ALL
                    SELECT 'w', w.v, w.j, w.o
                      FROM unnest(p_wallets, p_w_json, p_w_line) WITH ORDINALITY AS w (v, j, l, o)
                     WHERE w.l = i) AS x
             WHERE NOT EXISTS (SELECT 1 FROM unnest(f_push, f_kind, f_ident) AS f (p, k, v)
                                WHERE f.p = i AND f.k = x.k AND f.v = x.v);
            rs_missing[i] := missing;
        END IF;
        rs_response[i] := '{"requestId":"' || p_request[i]::text || '","status":"'
            || CASE WHEN rs_devices[i] = 0 THEN 'completed' WHEN p_send_at[i] IS NOT NULL THEN 'scheduled' ELSE 'queued' END
            || '","recipients":' || rs_users[i] || ',"deliveries":' || rs_devices[i]
            || ',"suppressed":' || rs_suppressed[i] || ',"sent":0,"failed":0,"missing":' || rs_missing[i] || '}';
    END LOOP;

    -- 3. In order, per partner (locked in uuid order, its windows read once): replay, render,
    --    refuse or count.
    IF n = 1 THEN
        ord := '{1}';
    ELSE
        ord := ARRAY(SELECT x.o FROM unnest(p_partner) WITH ORDINALITY AS x (p, o) ORDER BY x.p, x.o);
    END IF;
    FOREACH i IN ARRAY ord LOOP
        IF cur IS DISTINCT FROM p_partner[i] THEN
            cur := p_partner[i];
            -- Its own statement: the windows are read with a snapshot taken after the lock is held.
            PERFORM pg_advisory_xact_lock(hashtextextended(cur::text, 7301));
            now_s := floor(extract(epoch FROM clock_timestamp()));
            SELECT c.minute_count, c.day_count INTO minute_count, day_count FROM herald_rate_counts(cur, now_s) c;
            oldest_read := false;
            b_partner := b_partner || cur;
            b_now := b_now || now_s;
            b_counted := b_counted || 0;
            b_minute := b_minute || minute_count;
            b_day := b_day || day_count;
            cur_at := cur_at + 1;
            keys := '{}';
            key_items := '{}';
        END IF;
        IF st_hash[i] IS NOT NULL THEN
            o_outcome[i] := 'replay'; o_hash[i] := st_hash[i]; o_resp[i] := st_resp[i]; o_status[i] := st_status[i];
            CONTINUE;
        END IF;
        IF o_outcome[i] = 'render' THEN
            CONTINUE;
        END IF;
        -- The same key earlier in this batch: this push is its retry.
        j := CASE WHEN p_key[i] IS NOT NULL THEN array_position(keys, p_key[i]) END;
        IF j IS NOT NULL THEN
            dup_of[i] := key_items[j];
            o_outcome[i] := 'replay'; o_hash[i] := p_body_hash[key_items[j]]; o_resp[i] := rs_response[key_items[j]];
            o_status[i] := 202;
            CONTINUE;
        END IF;
        IF NOT (minute_count < p_per_minute[i] AND day_count < p_per_day[i]) THEN
            IF NOT oldest_read THEN
                SELECT o.minute_oldest, o.day_oldest INTO minute_oldest, day_oldest FROM herald_rate_oldest(cur, now_s) o;
                oldest_read := true;
            END IF;
            o_outcome[i] := 'limited';
            o_mc[i] := minute_count;
            o_mo[i] := coalesce(minute_oldest, CASE WHEN b_counted[cur_at] > 0 THEN now_s END);
            o_dc[i] := day_count;
            o_do[i] := coalesce(day_oldest, CASE WHEN b_counted[cur_at] > 0 THEN now_s / 60 END);
            o_now[i] := now_s;
            CONTINUE;
        END IF;
        minute_count := minute_count + 1;
        day_count := day_count + 1;
        b_counted[cur_at] := b_counted[cur_at] + 1;
        b_of[i] := cur_at;
        acc := acc || i;
        w_due[i] := coalesce(p_send_at[i], p_created[i]);
        IF p_key[i] IS NOT NULL THEN
            keys := keys || p_key[i];
            key_items := key_items || i;
        END IF;
        o_outcome[i] := 'accepted'; o_resp[i] := rs_response[i];
    END LOOP;

    -- 4. The keys, in one statement. One that another transaction stored meanwhile (a
    --    multi-device push or an activity with the same key) makes its push, and its retries in
    --    this batch, a replay of that answer, and its slot is not counted.
    IF keyed THEN
        WITH stored AS (
            INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
            SELECT p_partner[a], p_key[a], p_body_hash[a], p_request[a], rs_response[a], p_created[a]
              FROM unnest(acc) AS a WHERE p_key[a] IS NOT NULL
            ON CONFLICT (partner_id, key) DO UPDATE
               SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
                   response = EXCLUDED.response, created_at = EXCLUDED.created_at, status = EXCLUDED.status
             WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours'
            RETURNING k.request_id
        )
        SELECT array_agg(a) INTO lost FROM unnest(acc) AS a
         WHERE p_key[a] IS NOT NULL AND p_request[a] NOT IN (SELECT s.request_id FROM stored s);
        IF lost IS NOT NULL THEN
            FOREACH i IN ARRAY lost LOOP
                SELECT k.body_hash, k.response, k.status INTO rec FROM idempotency_keys k
                 WHERE k.partner_id = p_partner[i] AND k.key = p_key[i];
                FOR j IN SELECT x.o FROM unnest(dup_of) WITH ORDINALITY AS x (d, o) WHERE x.o = i OR x.d = i LOOP
                    o_outcome[j] := 'replay'; o_hash[j] := rec.body_hash; o_resp[j] := rec.response; o_status[j] := rec.status;
                END LOOP;
                b_counted[b_of[i]] := b_counted[b_of[i]] - 1;
            END LOOP;
            acc := ARRAY(SELECT a FROM unnest(acc) AS a WHERE a <> ALL (lost));
        END IF;
    END IF;

    -- 5. The counts, once per partner, and the accepted pushes' rows, in one statement (each part writes
    --    nothing when nothing is accepted), the deliveries by the outbox's one writer (functions/outbox_write.sql).
    --    Partner traffic is lane 0; a delivery is due at sendAt, or at once.
    --    The rows step 6 lists go out leased to the worker it notifies when the intake names its lease (p_lease):
    --    attempted once, as a claim would leave them, and the worker sends them from step 6's notification (or reads
    --    them, Sources/Store/DeliveryStore.swift, readLeasedSQL) instead of claiming them, or releases them. Unsent
    --    (the worker crashed), the rescuer returns them to pending when the lease ends.
    -- A loop, not a statement: a few expressions cost less than starting a plan.
    IF p_notify IS NOT NULL THEN
        FOREACH i IN ARRAY coalesce(acc, '{}') LOOP
            IF rs_devices[i] > 0 AND (p_send_at[i] IS NULL OR p_send_at[i] <= p_now[i]) THEN
                w_now[i] := true;
                push_ids := array_to_string(
                    d_id[array_position(d_push, i):array_position(d_push, i) + rs_devices[i] - 1], ',');
                due_ids := concat_ws(',', due_ids, push_ids);
                -- A push's devices are together in the resolution's rows. A notification's payload stays under
                -- Postgres' 8,000 bytes: a batch's rows go in as many as they need, a push's rows whole in one.
                push_rows := array_to_string(
                    d_row[array_position(d_push, i):array_position(d_push, i) + rs_devices[i] - 1], chr(30));
                IF octet_length(push_rows) > 7900 THEN
                    due_notes := due_notes || ('leased:' || push_ids);
                ELSIF coalesce(octet_length(due_rows), 0) + 1 + octet_length(push_rows) > 7900 THEN
                    due_notes := due_notes || ('rows:' || due_rows);
                    due_rows := push_rows;
                ELSE
                    due_rows := concat_ws(chr(30), due_rows, push_rows);
                END IF;
                due_count := due_count + rs_devices[i];
            END IF;
        END LOOP;
        -- Under the registration the intake read (a primary-key probe): a worker that is draining, or that lost that
        -- listener and registered another, withdrew it, and its rows are then written pending.
        -- A user with quiet hours gets nothing leased (functions/user_guards.sql judges the row at its claim): one
        -- probe of the small users_quiet_hours index per user.
        leasing := p_lease IS NOT NULL AND p_lease_seconds > 0 AND due_count BETWEEN 1 AND 200
            AND EXISTS (SELECT 1 FROM worker_listeners l WHERE l.pid = p_lease_listener AND l.worker_id = p_lease)
            AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = ANY (d_user) AND u.quiet_start IS NOT NULL);
    END IF;
    WITH counts AS (
        INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
        SELECT x.p, g.granularity, CASE g.granularity WHEN 's' THEN x.t ELSE x.t / 60 END, x.c
          FROM unnest(b_partner, b_now, b_counted) AS x (p, t, c), (VALUES ('s'::"char"), ('m'::"char")) AS g (granularity)
         WHERE x.c > 0
        ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + EXCLUDED.count
    ), windows AS (
        INSERT INTO rate_windows AS w (partner_id, minute_edge, minute_count, day_edge, day_count)
        SELECT x.p, x.t - 60, x.m + x.c, x.t / 60 - 1440, x.d + x.c
          FROM unnest(b_partner, b_now, b_counted, b_minute, b_day) AS x (p, t, c, m, d)
         WHERE x.c > 0
        ON CONFLICT (partner_id) DO UPDATE
           SET minute_edge = EXCLUDED.minute_edge, minute_count = EXCLUDED.minute_count,
               day_edge = EXCLUDED.day_edge, day_count = EXCLUDED.day_count
    ), requests AS (
        INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
            deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing,
            collapse_key)
        SELECT p_request[a], p_created[a], p_partner[a], p_mini_app[a], p_key[a], p_title[a], p_body[a],
               p_deep_link[a], p_data[a]::jsonb, p_send_at[a], p_ttl[a], herald_push_expiry(w_due[a], p_ttl[a]), 0,
               rs_users[a],                rs_devices[a], rs_suppressed[a], rs_missing[a]::jsonb, p_collapse[a]
          FROM unnest(acc) AS a
    ), senders AS (
        INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
        SELECT u.user_id, p_mini_app[u.a], p_created[u.a] FROM unnest(u_push, u_user) AS u (a, user_id)
         WHERE u.a = ANY (acc)
        ON CONFLICT DO NOTHING
    )
    SELECT count(*) INTO written
      FROM herald_outbox_write(0, p_request, p_created, p_partner, w_due, p_ttl, p_interruption, d_push, d_id,
                               d_service, d_user, d_device, d_env, d_payload, p_only => coalesce(acc, '{}'),
                               p_lease => CASE WHEN leasing THEN p_lease END, p_lease_seconds => p_lease_seconds,
                               p_leased => w_now, p_collapse => w_collapse);

    -- 6. The worker whose turn it is (p_notify, a channel; NULL: none), told when an accepted push has deliveries due
    --    now, and which, in the forms of Sources/HeraldCore/WakeUpMessage.swift: the payload lists them (ids,
    --    comma-separated), so the worker leases them by primary key instead of walking the due index
    --    (Sources/Store/DeliveryStore.swift, claimListedSQL). When step 5 leased them to it, the payloads carry them
    --    whole ('rows:' and the rows, CarriedRows; a batch's rows in as many notifications as they need), so the
    --    worker sends without a statement; a push whose rows alone do not fit one goes by id ('leased:' and the ids),
    --    and the worker reads them. More
    --    than 200 (an id list must stay under 8,000 bytes) go unlisted and pending: an empty payload, and the
    --    worker's claim walks the index.
    --    Sent at this commit, so the worker hears of the rows as they become visible, without the intake's notifier
    --    thread and its own transaction. The notification queue's lock is held from here to the end of the commit:
    --    an intake writes one batch at a time, so it serialises only the batches of other intakes.
    IF due_count > 0 THEN
        IF leasing AND due_notes IS NULL THEN
            -- Nearly every batch: its rows fit one notification, sent without a loop.
            PERFORM pg_notify(p_notify, 'rows:' || due_rows);
        ELSIF leasing THEN
            IF due_rows IS NOT NULL THEN
                due_notes := due_notes || ('rows:' || due_rows);
            END IF;
            FOREACH note IN ARRAY due_notes LOOP
                PERFORM pg_notify(p_notify, note);
            END LOOP;
        ELSE
            PERFORM pg_notify(p_notify, CASE WHEN due_count <= 200 THEN due_ids ELSE '' END);
        END IF;
    END IF;

    RETURN QUERY
    SELECT g.i, o_outcome[g.i], o_hash[g.i], o_resp[g.i], o_status[g.i], o_mc[g.i], o_mo[g.i], o_dc[g.i],
           o_do[g.i], o_now[g.i], rs_devices[g.i], rs_resolved[g.i]
      FROM generate_series(1, n) AS g (i);
END
$$;
