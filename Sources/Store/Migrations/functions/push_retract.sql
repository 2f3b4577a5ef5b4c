-- A partner's retraction of its push (docs/api.md, "Retracting a push"), in the intake's transaction with the
-- messages' write that follows it (PushStore.retract):
-- 1. the audit row, locked, by its id and creation (one partition) and only for its partner; none: no row returned;
--    already retracted: one row with what the first retraction recorded (`first_time` false) and nothing else done;
-- 2. its rows still in the outbox are deleted and recorded in history as 'cancelled', a group row's members not yet
--    done one by one: pending rows through the partner's due index from the request's due time (a row only ever
--    moves later, a retry's or quiet hours'; one a newer collapse key superseded may have moved earlier and is left
--    to the claim, which records it superseded), rows in flight through the lease index. A worker's outcome for a
--    row it held is then dropped, as for a row rescued from it (functions/complete_deliveries.sql);
-- 3. the devices that may show it: every sent delivery in history (delivery_history_request) and every row that was
--    in flight, with the device's environment now; a removed device gets nothing. A row in flight is due when its
--    lease ends, so the message cannot overtake the send it retracts;
-- 4. push.retracted for a partner with a webhook, then the counts: `cancelled` finishes the deliveries it stopped
--    (push.completed when they were the last, functions/push_requests_completed_on_update.sql), `retracted` the
--    messages the caller writes under p_retraction.
-- Returns the counts on every row, and one row per message to write (its delivery, service, user, device,
-- environment and due time); a single row with NULL targets when there is none.
CREATE OR REPLACE FUNCTION herald_push_retract(p_request uuid, p_from timestamptz, p_to timestamptz, p_partner uuid,
                                               p_retraction uuid)
RETURNS TABLE (first_time boolean, retracted_at timestamptz, expires_at timestamptz, cancelled integer, retracted integer,
               delivery_id uuid, service text, user_id text, device_id text, environment text, due_at timestamptz)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_column
DECLARE
    v_request  push_requests%ROWTYPE;
    v_now      timestamptz := now();
    v_cancelled integer;
    v_targets  integer;
    -- The messages to write: per target, the delivery it retracts, where it went and when the message is due.
    v_ids          uuid[];
    v_services     text[];
    v_users        text[];
    v_devices      text[];
    v_environments text[];
    v_due          timestamptz[];
BEGIN
    SELECT * INTO v_request FROM push_requests r
     WHERE r.id = p_request AND r.created_at >= p_from AND r.created_at < p_to AND r.partner_id = p_partner
       FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    IF v_request.retracted_at IS NOT NULL THEN
        RETURN QUERY SELECT false, v_request.retracted_at, v_request.expires_at, v_request.cancelled,
                            v_request.retracted, NULL::uuid, NULL::text, NULL::text, NULL::text, NULL::text,
                            NULL::timestamptz;
        RETURN;
    END IF;

    WITH taken AS (
        DELETE FROM deliveries d
         WHERE d.id IN (SELECT q.id FROM deliveries q
                         WHERE q.state = 'pending' AND q.lane = v_request.lane AND q.partner_id = p_partner
                           AND q.available_at >= coalesce(v_request.send_at, v_request.created_at)
                           AND q.request_id = p_request
                        UNION ALL
                        SELECT q.id FROM deliveries q WHERE q.state = 'leased' AND q.request_id = p_request)
        RETURNING d.id, d.state::text AS state, d.lease_expires_at, d.service::text AS service,
                  d.environment::text AS environment, d.user_id, d.device_id, d.lane, d.attempts, d.created_at,
                  d.members, d.member_users, d.member_devices, d.members_done
    ), stopped AS (
        SELECT t.id, t.state, t.lease_expires_at, t.service, t.environment, t.user_id, t.device_id, t.lane,
               t.attempts, t.created_at
          FROM taken t WHERE t.members IS NULL
        UNION ALL
        SELECT m.id, t.state, t.lease_expires_at, t.service, t.environment, m.user_id, m.device_id, t.lane,
               t.attempts, t.created_at
          FROM taken t
         CROSS JOIN LATERAL unnest(t.members, t.member_users, t.member_devices)
               WITH ORDINALITY AS m (id, user_id, device_id, member)
         WHERE t.members IS NOT NULL AND NOT m.member = ANY (coalesce(t.members_done, '{}'))
    ), history AS (
        INSERT INTO delivery_history (id, request_id, partner_id, lane, service, user_id, device_id, outcome,
                                      attempts, last_error, created_at, finished_at, request_created_at)
        SELECT s.id, p_request, p_partner, s.lane, s.service, s.user_id, s.device_id, 'cancelled', s.attempts,
               'retracted', s.created_at, v_now, v_request.created_at
          FROM stopped s
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM history)::integer, coalesce(array_agg(s.id), '{}'),
           coalesce(array_agg(s.service), '{}'), coalesce(array_agg(s.user_id), '{}'),
           coalesce(array_agg(s.device_id), '{}'), coalesce(array_agg(s.environment), '{}'),
           coalesce(array_agg(greatest(s.lease_expires_at, v_now)), '{}')
      INTO v_cancelled, v_ids, v_services, v_users, v_devices, v_environments, v_due
      FROM stopped s WHERE s.state = 'leased';

    SELECT v_ids || coalesce(array_agg(h.id), '{}'), v_services || coalesce(array_agg(h.service), '{}'),
           v_users || coalesce(array_agg(h.user_id), '{}'), v_devices || coalesce(array_agg(h.device_id), '{}'),
           v_environments || coalesce(array_agg(v.environment), '{}'),
           v_due || coalesce(array_agg(v_now), '{}')
      INTO v_ids, v_services, v_users, v_devices, v_environments, v_due
      FROM delivery_history_deliveries h
      JOIN devices v ON v.user_id = h.user_id AND v.device_id = h.device_id
     WHERE h.request_id = p_request AND h.outcome = 'sent' AND h.activity_event IS NULL
       AND h.finished_at >= v_request.created_at;
    v_targets := cardinality(v_ids);

    PERFORM herald_webhook_event(p_partner, 'push.retracted', p_request, 'requestId', v_request.sent,
                                 v_request.failed, v_request.suppressed + v_request.suppressed_deliveries,
                                 v_request.superseded, v_request.cancelled + v_cancelled, v_targets, 'retractedAt');
    UPDATE push_requests r
       SET retracted_at = v_now, retraction_id = p_retraction, cancelled = r.cancelled + v_cancelled,
           retracted = v_targets
     WHERE r.id = p_request AND r.created_at = v_request.created_at;

    IF v_targets = 0 THEN
        RETURN QUERY SELECT true, v_now, v_request.expires_at, v_request.cancelled + v_cancelled, 0, NULL::uuid,
                            NULL::text, NULL::text, NULL::text, NULL::text, NULL::timestamptz;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT true, v_now, v_request.expires_at, v_request.cancelled + v_cancelled, v_targets, t.delivery_id,
           t.service, t.user_id, t.device_id, t.environment, t.due_at
      FROM unnest(v_ids, v_services, v_users, v_devices, v_environments, v_due)
           AS t (delivery_id, service, user_id, device_id, environment, due_at);
END
$$;
