-- name: setActor
-- parameters: kind String, detail String, client String
-- Names who makes an admin change for the rest of the transaction ($1 kind, $2 detail, $3 client), as the audit
-- triggers read it.
SELECT set_config('herald.actor', $1, true), set_config('herald.actor_detail', $2, true),
       set_config('herald.client', $3, true);

-- name: record
-- parameters: action String, partnerID UUID?, miniAppID String?, detailJSON String
-- An audit entry no trigger writes (a replay): $1 action, $2 partner, $3 mini-app id, $4 detail (JSON text).
SELECT herald_admin_audit($1, $2, $3, $4::jsonb);

-- name: list
-- parameters: before Int?, limit Int
-- returns: AdminAuditStore.Entry
-- Entries newest first by the primary key: $1 before (an id, or NULL), $2 limit.
SELECT id, at, actor, actor_detail, client, action, partner_id, mini_app_id, detail::text AS detail
  FROM admin_audit
 WHERE ($1::bigint IS NULL OR id < $1::bigint)
 ORDER BY id DESC LIMIT $2;

-- name: listPartner
-- parameters: before Int?, limit Int, partnerID UUID
-- returns: AdminAuditStore.Entry
-- One partner's entries newest first, through admin_audit_partner: $1 before, $2 limit, $3 partner.
SELECT id, at, actor, actor_detail, client, action, partner_id, mini_app_id, detail::text AS detail
  FROM admin_audit
 WHERE partner_id = $3 AND ($1::bigint IS NULL OR id < $1::bigint)
 ORDER BY partner_id, id DESC LIMIT $2;
