-- Every recorded delivery, one row each: a sent group row's members unnested.
CREATE OR REPLACE VIEW delivery_history_deliveries AS
SELECT coalesce(m.id, h.id) AS id, h.request_id, h.request_created_at, h.partner_id, h.lane, h.service,
       coalesce(m.user_id, h.user_id) AS user_id, coalesce(m.device_id, h.device_id) AS device_id, h.outcome,
       h.attempts, h.last_error, h.created_at, h.finished_at, h.activity_event, h.payload, h.replayed_at,
       CASE WHEN h.members IS NOT NULL THEN h.id END AS group_id
  FROM delivery_history h
  LEFT JOIN LATERAL unnest(h.members, h.member_users, h.member_devices) AS m (id, user_id, device_id) ON true;
