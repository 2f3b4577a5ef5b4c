-- The intake's push in ONE statement and ONE transaction, for a batch of pushes (group commit).
--
-- Before, every push cost two round trips and two transactions: a pipeline (idempotency lookup,
-- resolution, herald_rate_reserve with its own asynchronous commit) and then the write. Postgres
-- spent more on the reads and the reservation than on the write (docs/performance.md, Intake).
-- Here the intake's writer (Sources/Store/IntakeWriter.swift) sends the pushes that arrived
-- while its previous batch was committing, and this function, for each of them in order:
--   1. answers from the stored Idempotency-Key response if there is one ('replay');
--   2. resolves the recipients (herald_resolve_recipients, sql/005_push_functions.sql); a push
--      that resolves to more than one device goes back to the handler ('render': each delivery
--      carries its own signed id, rendered in Swift), which takes the two-round-trip path;
--   3. reserves a rate-limit slot ('limited' when a window is full, with what Retry-After needs);
--   4. stores the idempotency key (if another transaction stored it first, 'replay' and the slot
--      is not counted), and the audit row, the sender and the delivery ('accepted').
-- The rate windows stay exact across processes: the same per-partner advisory lock as
-- herald_rate_reserve (sql/002_partners.sql) is held while the batch counts and until it commits,
-- and the counts of a batch are written once per partner. Partners are locked in uuid order, so
-- two batches never wait for each other in a cycle. The accepted response is built here, in the
-- compact form of HeraldCore's JSONWriter, from identifiers the intake passes already JSON-encoded.
--
-- Arrays, one element per push unless noted; e_end/w_end are each push's cumulative end offset
-- in the flattened emails/wallets arrays (and their JSON-encoded forms e_json/w_json).
CREATE FUNCTION herald_intake_push(
    p_partner uuid[], p_per_minute integer[], p_per_day integer[], p_tenant text[], p_mini_app text[],
    p_now timestamptz[], p_key text[], p_body_hash text[], p_request uuid[], p_created timestamptz[],
    p_title text[], p_body text[], p_deep_link text[], p_data text[], p_send_at timestamptz[],
    p_ttl integer[], p_expires timestamptz[],
    p_e_end integer[], p_emails text[], p_e_json text[],
    p_w_end integer[], p_wallets text[], p_w_json text[],
    p_delivery uuid[], p_apns text[], p_fcm text[])
RETURNS TABLE (r_item integer, r_outcome text, r_body_hash text, r_response text, r_status integer,
               r_minute_count integer, r_minute_oldest bigint, r_day_count integer, r_day_oldest bigint,
               r_now_seconds bigint, r_deliveries integer)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    n integer := cardinality(p_partner);
    i integer;
    cur uuid;
    minute_count integer;
    minute_oldest bigint;
    day_count integer;
    day_oldest bigint;
    now_s bigint;
    now_m bigint;
    counted integer := 0;
    e_from integer;
    w_from integer;
    n_users integer;
    n_suppressed integer;
    n_devices integer;
    matched_e text[];
    matched_w text[];
    users text[];
    d_user text;
    d_device text;
    d_service text;
    d_env text;
    missing_e text;
    missing_w text;
    missing text;
    response text;
    stored record;
    -- What the bulk writes at the end need, per accepted push.
    acc integer[] := '{}';
    a_users integer[] := array_fill(0, ARRAY[n]);
    a_devices integer[] := array_fill(0, ARRAY[n]);
    a_suppressed integer[] := array_fill(0, ARRAY[n]);
    a_missing text[] := array_fill(NULL::text, ARRAY[n]);
    a_d_user text[] := array_fill(NULL::text, ARRAY[n]);
    a_d_device text[] := array_fill(NULL::text, ARRAY[n]);
    a_d_service text[] := array_fill(NULL::text, ARRAY[n]);
    a_d_env text[] := array_fill(NULL::text, ARRAY[n]);
    s_user text[] := '{}';
    s_item integer[] := '{}';
BEGIN
    FOR i IN SELECT x.o FROM unnest(p_partner) WITH ORDINALITY AS x (p, o) ORDER BY x.p, x.o LOOP
        IF cur IS DISTINCT FROM p_partner[i] THEN
            IF counted > 0 THEN
                INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
                VALUES (cur, 's', now_s, counted), (cur, 'm', now_m, counted)
                ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + EXCLUDED.count;
            END IF;
            cur := p_partner[i];
            counted := 0;
            PERFORM pg_advisory_xact_lock(hashtextextended(cur::text, 7301));
            now_s := floor(extract(epoch FROM clock_timestamp()));
            now_m := now_s / 60;
            SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO minute_count, minute_oldest
              FROM rate_buckets b
             WHERE b.partner_id = cur AND b.granularity = 's' AND b.bucket > now_s - 60;
            SELECT coalesce(sum(b.count), 0), min(b.bucket) INTO day_count, day_oldest
              FROM rate_buckets b
             WHERE b.partner_id = cur AND b.granularity = 'm' AND b.bucket > now_m - 1440;
        END IF;
        r_item := i;
        r_body_hash := NULL; r_response := NULL; r_status := NULL; r_deliveries := NULL;
        r_minute_count := NULL; r_minute_oldest := NULL; r_day_count := NULL; r_day_oldest := NULL;
        r_now_seconds := NULL;

        -- 1. A stored answer for this key (within its 24 hours) replays, and counts nothing.
        IF p_key[i] IS NOT NULL THEN
            SELECT k.body_hash, k.response, k.status INTO stored FROM idempotency_keys k
             WHERE k.partner_id = cur AND k.key = p_key[i] AND k.created_at > p_now[i] - interval '24 hours';
            IF FOUND THEN
                r_outcome := 'replay';
                r_body_hash := stored.body_hash; r_response := stored.response; r_status := stored.status;
                RETURN NEXT;
                CONTINUE;
            END IF;
        END IF;

        -- 2. The recipients.
        e_from := CASE WHEN i = 1 THEN 1 ELSE p_e_end[i - 1] + 1 END;
        w_from := CASE WHEN i = 1 THEN 1 ELSE p_w_end[i - 1] + 1 END;
        SELECT count(*) FILTER (WHERE r.kind = 'u'), count(*) FILTER (WHERE r.kind = 'u' AND r.opted_out),
               count(*) FILTER (WHERE r.kind = 'd'),
               coalesce(array_agg(r.ident) FILTER (WHERE r.kind = 'e'), '{}'),
               coalesce(array_agg(r.ident) FILTER (WHERE r.kind = 'w'), '{}'),
               coalesce(array_agg(r.user_id ORDER BY r.user_id) FILTER (WHERE r.kind = 'u'), '{}'),
               min(r.user_id) FILTER (WHERE r.kind = 'd'), min(r.ident) FILTER (WHERE r.kind = 'd'),
               min(r.service) FILTER (WHERE r.kind = 'd'), min(r.environment) FILTER (WHERE r.kind = 'd')
          INTO n_users, n_suppressed, n_devices, matched_e, matched_w, users, d_user, d_device, d_service, d_env
          FROM herald_resolve_recipients(p_tenant[i], p_emails[e_from:p_e_end[i]], p_wallets[w_from:p_w_end[i]],
                                         p_mini_app[i]) r;
        IF n_devices > 1 THEN
            r_outcome := 'render';
            RETURN NEXT;
            CONTINUE;
        END IF;

        -- 3. The rate windows: counted in this batch so far plus what is committed.
        IF NOT (minute_count < p_per_minute[i] AND day_count < p_per_day[i]) THEN
            r_outcome := 'limited';
            r_minute_count := minute_count;
            r_minute_oldest := coalesce(minute_oldest, CASE WHEN counted > 0 THEN now_s END);
            r_day_count := day_count;
            r_day_oldest := coalesce(day_oldest, CASE WHEN counted > 0 THEN now_m END);
            r_now_seconds := now_s;
            RETURN NEXT;
            CONTINUE;
        END IF;

        -- 4. The answer, and the key that stores it.
        SELECT string_agg(x.j, ',' ORDER BY x.o) INTO missing_e
          FROM unnest(p_emails[e_from:p_e_end[i]], p_e_json[e_from:p_e_end[i]]) WITH ORDINALITY AS x (v, j, o)
         WHERE NOT x.v = ANY (matched_e);
        SELECT string_agg(x.j, ',' ORDER BY x.o) INTO missing_w
          FROM unnest(p_wallets[w_from:p_w_end[i]], p_w_json[w_from:p_w_end[i]]) WITH ORDINALITY AS x (v, j, o)
         WHERE NOT x.v = ANY (matched_w);
        missing := '{"emails":[' || coalesce(missing_e, '') || '],"wallets":[' || coalesce(missing_w, '') || ']}';
        response := '{"requestId":"' || p_request[i]::text || '","status":"'
            || CASE WHEN n_devices = 0 THEN 'completed' WHEN p_send_at[i] IS NOT NULL THEN 'scheduled' ELSE 'queued' END
            || '","recipients":' || n_users || ',"deliveries":' || n_devices || ',"suppressed":' || n_suppressed
            || ',"sent":0,"failed":0,"missing":' || missing || '}';
        IF p_key[i] IS NOT NULL THEN
            INSERT INTO idempotency_keys AS k (partner_id, key, body_hash, request_id, response, created_at)
            VALUES (cur, p_key[i], p_body_hash[i], p_request[i], response, p_created[i])
            ON CONFLICT (partner_id, key) DO UPDATE
               SET body_hash = EXCLUDED.body_hash, request_id = EXCLUDED.request_id,
                   response = EXCLUDED.response, created_at = EXCLUDED.created_at, status = EXCLUDED.status
             WHERE k.created_at <= EXCLUDED.created_at - interval '24 hours';
            IF NOT FOUND THEN
                -- Another transaction (a multi-device push or an activity) stored this key first.
                SELECT k.body_hash, k.response, k.status INTO stored FROM idempotency_keys k
                 WHERE k.partner_id = cur AND k.key = p_key[i];
                r_outcome := 'replay';
                r_body_hash := stored.body_hash; r_response := stored.response; r_status := stored.status;
                RETURN NEXT;
                CONTINUE;
            END IF;
        END IF;

        minute_count := minute_count + 1;
        day_count := day_count + 1;
        counted := counted + 1;
        acc := acc || i;
        a_users[i] := n_users;
        a_devices[i] := n_devices;
        a_suppressed[i] := n_suppressed;
        a_missing[i] := missing;
        a_d_user[i] := d_user;
        a_d_device[i] := d_device;
        a_d_service[i] := d_service;
        a_d_env[i] := d_env;
        s_user := s_user || users;
        s_item := s_item || array_fill(i, ARRAY[cardinality(users)]);
        r_outcome := 'accepted';
        r_response := response;
        r_deliveries := n_devices;
        RETURN NEXT;
    END LOOP;
    IF counted > 0 THEN
        INSERT INTO rate_buckets AS b (partner_id, granularity, bucket, count)
        VALUES (cur, 's', now_s, counted), (cur, 'm', now_m, counted)
        ON CONFLICT (partner_id, granularity, bucket) DO UPDATE SET count = b.count + EXCLUDED.count;
    END IF;
    IF cardinality(acc) = 0 THEN
        RETURN;
    END IF;

    -- The accepted pushes' rows, one statement per table for the whole batch. Partner traffic is
    -- lane 0; a delivery is due at sendAt, or at once.
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body,
        deep_link, data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    SELECT p_request[a], p_created[a], p_partner[a], p_mini_app[a], p_key[a], p_title[a], p_body[a],
           p_deep_link[a], p_data[a]::jsonb, p_send_at[a], p_ttl[a], p_expires[a], 0, a_users[a], a_devices[a],
           a_suppressed[a], a_missing[a]::jsonb
      FROM unnest(acc) AS a;
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    SELECT s.u, p_mini_app[s.a], p_created[s.a] FROM unnest(s_user, s_item) AS s (u, a)
    ON CONFLICT DO NOTHING;
    INSERT INTO deliveries (id, request_id, request_created_at, partner_id, lane, service, user_id,
        device_id, environment, payload, available_at, expires_at)
    SELECT p_delivery[a], p_request[a], p_created[a], p_partner[a], 0, a_d_service[a], a_d_user[a],
           a_d_device[a], a_d_env[a], CASE a_d_service[a] WHEN 'apns' THEN p_apns[a] ELSE p_fcm[a] END,
           coalesce(p_send_at[a], p_created[a]), p_expires[a]
      FROM unnest(acc) AS a
     WHERE a_devices[a] = 1;
END
$$;
