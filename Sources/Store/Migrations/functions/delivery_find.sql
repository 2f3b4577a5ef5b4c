-- The push delivery a device was sent, by the id its payload carries (`deliveryId`): its request, the request's
-- acceptance, its partner and its user; no row for an unknown id or a Live Activity's delivery. Finished deliveries
-- first, as a device reports after the send: a single row by delivery_history_id, a group row's member by
-- delivery_history_members (sql/061_delivery_events.sql); both only in the partitions finished since a day before
-- the id's own time (a UUIDv7's, functions/uuid_v7_time.sql; the day absorbs clock skew between intakes and
-- Postgres), so the months before it are pruned. Then the outbox (a completion not committed yet): by primary key,
-- or a group row's member by deliveries_members. LIMIT 1 stops at the first branch that finds it.
-- LANGUAGE sql, one SELECT: inlined into its caller's statement (QueryPlanTests EXPLAINs it).
CREATE OR REPLACE FUNCTION herald_delivery_find(p_delivery uuid)
RETURNS TABLE (request_id uuid, request_created_at timestamptz, partner_id uuid, user_id text)
LANGUAGE sql STABLE AS $$
    (SELECT h.request_id, coalesce(h.request_created_at, herald_uuid_v7_time(h.request_id)), h.partner_id, h.user_id
       FROM delivery_history h
      WHERE h.id = p_delivery AND h.members IS NULL AND h.activity_event IS NULL
        AND h.finished_at >= herald_uuid_v7_time(p_delivery) - interval '1 day'
      LIMIT 1)
    UNION ALL
    (SELECT h.request_id, coalesce(h.request_created_at, herald_uuid_v7_time(h.request_id)), h.partner_id, m.user_id
       FROM delivery_history h
      CROSS JOIN LATERAL unnest(h.members, h.member_users) AS m (id, user_id)
      WHERE h.members @> ARRAY[p_delivery] AND h.members IS NOT NULL
        AND h.finished_at >= herald_uuid_v7_time(p_delivery) - interval '1 day' AND m.id = p_delivery
      LIMIT 1)
    UNION ALL
    (SELECT d.request_id, d.request_created_at, d.partner_id, d.user_id
       FROM deliveries d
      WHERE d.id = p_delivery AND d.members IS NULL AND d.activity_id IS NULL)
    UNION ALL
    (SELECT d.request_id, d.request_created_at, d.partner_id, m.user_id
       FROM deliveries d
      CROSS JOIN LATERAL unnest(d.members, d.member_users) AS m (id, user_id)
      WHERE d.members @> ARRAY[p_delivery] AND d.members IS NOT NULL AND m.id = p_delivery
      LIMIT 1)
    LIMIT 1
$$;
