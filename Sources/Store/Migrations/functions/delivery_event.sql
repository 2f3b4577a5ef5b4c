-- Records what the host's app reports of push delivery `p_delivery` (docs/api-host.md, "Delivery events"):
-- `p_event` ('received', 'opened' or 'dismissed') at `p_at`. Returns one row: `result`, and `at`, the event's
-- stored time (the first report's, for a repeat):
--   not_found  no push delivery with this id (a Live Activity's is not one), or not user `p_user`'s (when given);
--   late       its push was accepted more than `p_window_days` before `p_now`: its counts are final, nothing changes;
--   repeated   this event of this delivery was recorded before: nothing changes;
--   recorded   stored, and counted on the push's audit row.
-- Opening or dismissing a notification means it was received: the first of them records `received` too (counted
-- once). The time is never before the push's acceptance (a phone's clock may be behind).
-- If its partner has a webhook, a first `opened` queues the request's push.opened event due `p_webhook_delay`
-- seconds later, unless one waits already that no sender has tried (webhook_events_opened_pending); every event
-- recorded while it waits rewrites its body with the request's counts, so the opens of that time go out as one event
-- with the counts of the last report before it left. Once tried, an event keeps its body: a retry is the same event
-- (the partner deduplicates on its id), and the next open queues a new one. The request's row is locked first, so
-- two reports of one request take their turns.
CREATE OR REPLACE FUNCTION herald_delivery_event(p_delivery uuid, p_event text, p_at timestamptz, p_user text,
                                                 p_now timestamptz, p_window_days integer, p_webhook_delay integer)
RETURNS TABLE (result text, at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
    v_found record;
    v_at timestamptz;
    v_new text[];
    v_counts record;
    v_event uuid;
BEGIN
    SELECT f.request_id, f.request_created_at, f.partner_id, f.user_id INTO v_found
      FROM herald_delivery_find(p_delivery) f;
    IF NOT FOUND OR (p_user IS NOT NULL AND v_found.user_id <> p_user) THEN
        RETURN QUERY SELECT 'not_found'::text, NULL::timestamptz;
        RETURN;
    END IF;
    IF v_found.request_created_at < p_now - make_interval(days => p_window_days) THEN
        RETURN QUERY SELECT 'late'::text, NULL::timestamptz;
        RETURN;
    END IF;
    v_at := greatest(p_at, v_found.request_created_at);

    WITH written AS (
        INSERT INTO delivery_events AS e (delivery_id, event, at, request_id, request_created_at, partner_id,
                                          recorded_at)
        SELECT p_delivery, x.event, v_at, v_found.request_id, v_found.request_created_at, v_found.partner_id, p_now
          FROM unnest(CASE WHEN p_event = 'received' THEN ARRAY['received'] ELSE ARRAY['received', p_event] END)
               AS x (event)
        ON CONFLICT DO NOTHING
        RETURNING e.event
    )
    SELECT coalesce(array_agg(w.event), '{}') INTO v_new FROM written w;

    IF NOT (p_event = ANY (v_new)) THEN
        RETURN QUERY
        SELECT 'repeated'::text, e.at FROM delivery_events e
         WHERE e.delivery_id = p_delivery AND e.event = p_event AND e.request_created_at = v_found.request_created_at;
        RETURN;
    END IF;

    UPDATE push_requests p
       SET received = p.received + ('received' = ANY (v_new))::integer,
           opened = p.opened + ('opened' = ANY (v_new))::integer,
           dismissed = p.dismissed + ('dismissed' = ANY (v_new))::integer
     WHERE p.id = v_found.request_id AND p.created_at = v_found.request_created_at
    RETURNING p.partner_id, p.sent, p.received, p.opened, p.dismissed INTO v_counts;

    IF FOUND AND EXISTS (SELECT 1 FROM partners p WHERE p.id = v_counts.partner_id AND p.webhook_url IS NOT NULL) THEN
        SELECT w.id INTO v_event FROM webhook_events w
         WHERE w.subject_id = v_found.request_id AND w.type = 'push.opened' AND w.state = 'pending'
           AND w.attempts = 0
         ORDER BY w.created_at DESC
         LIMIT 1
           FOR UPDATE;
        IF v_event IS NULL AND p_event = 'opened' THEN
            v_event := gen_random_uuid();
            INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start,
                                        available_at)
            VALUES (v_event, v_counts.partner_id, 'push.opened', v_found.request_id, '', p_now, p_now,
                    p_now + make_interval(secs => p_webhook_delay));
        END IF;
        IF v_event IS NOT NULL THEN
            UPDATE webhook_events w
               SET body = json_strip_nulls(json_build_object(
                              'type', 'push.opened', 'id', v_event, 'requestId', v_found.request_id,
                              'sent', v_counts.sent, 'received', v_counts.received, 'opened', v_counts.opened,
                              'dismissed', v_counts.dismissed, 'countedAt', herald_iso8601(p_now)))::text
             WHERE w.id = v_event;
        END IF;
    END IF;
    RETURN QUERY SELECT 'recorded'::text, v_at;
END
$$;
