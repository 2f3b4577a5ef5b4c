-- Schedules one reminder, exact under concurrency: a transaction-scoped advisory lock per (user,
-- mini-app) serialises every schedule of that pair across intake processes, so the count of pending
-- reminders and the insert cannot interleave. The intake resolved the user's devices and rendered one
-- signed payload per device before (Sources/Store/ReminderStore.swift); here the user is looked up
-- again (removed, or moved to another tenant, meanwhile), reminders found sent are marked, and the
-- cap is checked before anything is written.
--
-- With an Idempotency-Key (p_key, and p_body_hash the SHA-256 of the request's body) a second lock, per (user, key),
-- serialises schedules that share the key across mini-apps; a reminder of the user scheduled with the key in the
-- last 24 hours answers 'replay' (the same body: its id is returned) or 'key_reused' (another body), and nothing
-- is written. An older reminder with the key loses it (reminders_idempotency is unique per user and key).
--
-- Outcomes: 'scheduled' (with the pending count including this one), 'limited' (the pending count),
-- 'user_not_found', 'tenant_mismatch', 'replay', 'key_reused'; only 'scheduled' writes a reminder.
CREATE OR REPLACE FUNCTION herald_schedule_reminder(
    p_reminder uuid, p_user text, p_tenant text, p_partner uuid, p_mini_app text, p_max_pending integer,
    p_request uuid, p_created timestamptz, p_title text, p_shown_title text, p_body text, p_deep_link text,
    p_at timestamptz, p_due timestamptz, p_send_at timestamptz, p_ttl integer,
    p_delivery uuid[], p_service text[], p_device text[], p_environment text[], p_payload text[],
    p_key text, p_body_hash text)
RETURNS TABLE (outcome text, pending integer, reminder uuid)
LANGUAGE plpgsql
AS $$
DECLARE
    v_tenant  text;
    v_pending integer;
    v_keyed   record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_user || '/' || p_mini_app, 7313));
    IF p_key IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_user || '/' || p_key, 7314));
        SELECT r.id, r.body_hash, r.created_at INTO v_keyed
          FROM reminders r WHERE r.user_id = p_user AND r.idempotency_key = p_key;
        IF FOUND AND v_keyed.created_at > now() - interval '24 hours' THEN
            RETURN QUERY SELECT CASE WHEN v_keyed.body_hash = p_body_hash THEN 'replay' ELSE 'key_reused' END, 0, v_keyed.id;
            RETURN;
        ELSIF FOUND THEN
            UPDATE reminders SET idempotency_key = NULL, body_hash = NULL WHERE id = v_keyed.id;
        END IF;
    END IF;
    SELECT u.tenant_id INTO v_tenant FROM users u WHERE u.id = p_user;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'user_not_found'::text, 0, NULL::uuid;
        RETURN;
    END IF;
    IF v_tenant <> p_tenant THEN
        RETURN QUERY SELECT 'tenant_mismatch'::text, 0, NULL::uuid;
        RETURN;
    END IF;

    UPDATE reminders r SET status = 'sent', finished_at = now()
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled'
       AND NOT herald_reminder_pending(r.deliveries);
    SELECT count(*) INTO v_pending FROM reminders r
     WHERE r.user_id = p_user AND r.mini_app_id = p_mini_app AND r.status = 'scheduled';
    IF v_pending >= p_max_pending THEN
        RETURN QUERY SELECT 'limited'::text, v_pending, NULL::uuid;
        RETURN;
    END IF;

    -- The audit row of a one-recipient push without partner data: the partner's GET of it, its counts,
    -- the push.completed webhook and heraldctl's stats and replay treat it as they treat a push.
    INSERT INTO push_requests (id, created_at, partner_id, mini_app_id, idempotency_key, title, body, deep_link,
        data, send_at, ttl_seconds, expires_at, lane, recipients, deliveries, suppressed, missing)
    VALUES (p_request, p_created, p_partner, p_mini_app, NULL, p_shown_title, p_body, p_deep_link, '{}', p_send_at,
            p_ttl, herald_push_expiry(p_due, p_ttl), 0, 1, cardinality(p_delivery), 0, '{"emails":[],"wallets":[]}');
    INSERT INTO user_senders (user_id, mini_app_id, first_sent_at)
    VALUES (p_user, p_mini_app, p_created)
    ON CONFLICT DO NOTHING;
    -- By the outbox's one writer (functions/outbox_write.sql): the user's devices, due at p_due, outside the host's
    -- guards (the user's own reminder).
    PERFORM 1
       FROM herald_outbox_write(0, ARRAY[p_request], ARRAY[p_created], ARRAY[p_partner], ARRAY[p_due], ARRAY[p_ttl],
                                NULL, array_fill(1, ARRAY[cardinality(p_delivery)]), p_delivery, p_service,
                                array_fill(p_user, ARRAY[cardinality(p_delivery)]), p_device, p_environment, p_payload);
    INSERT INTO reminders (id, user_id, mini_app_id, partner_id, request_id, request_created_at, title, body,
        deep_link, at, deliveries, created_at, idempotency_key, body_hash)
    VALUES (p_reminder, p_user, p_mini_app, p_partner, p_request, p_created, p_title, p_body, p_deep_link, p_at,
            p_delivery, p_created, p_key, p_body_hash);
    RETURN QUERY SELECT 'scheduled'::text, v_pending + 1, p_reminder;
END
$$;
