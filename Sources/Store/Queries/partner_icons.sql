-- name: find
-- parameters: miniAppID String, size Int
-- returns: PartnerIconStore.StoredIcon
-- The active partner's icon of a mini-app at one size: $1 mini-app id, $2 size. Probes partners_active_mini_app,
-- then partner_icons' key.
SELECT i.png, i.sha256
  FROM partners p
  JOIN partner_icons i ON i.partner_id = p.id AND i.size = $2
 WHERE p.mini_app_id = $1 AND p.revoked_at IS NULL;

-- name: deleteAll
-- parameters: partnerID UUID
-- Every stored size of a partner's icon ($1 partner).
DELETE FROM partner_icons WHERE partner_id = $1;

-- name: insert
-- A partner's icon images: $1 partner, $2 sizes, $3 PNGs, $4 their SHA-256 (hex), element by element.
INSERT INTO partner_icons (partner_id, size, png, sha256)
SELECT $1, s.size, s.png, s.sha256
  FROM unnest($2::integer[], $3::bytea[], $4::text[]) AS s (size, png, sha256);
