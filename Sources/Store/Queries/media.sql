-- name: insert
-- A partner's media (sql/060_media.sql): $1 id, $2 partner, $3 content type, $4 bytes, $5 their SHA-256 (hex),
-- $6 lifetime in seconds, $7 the most live media a partner may hold. No row when the partner already holds $7: the
-- count stops at $7 rows of media_partner_expires. Two uploads racing for the last place may both pass.
INSERT INTO media (id, partner_id, content_type, bytes, sha256, created_at, expires_at)
SELECT $1, $2, $3, $4, $5, now(), now() + make_interval(secs => $6)
 WHERE (SELECT count(*) FROM (SELECT 1 FROM media WHERE partner_id = $2 AND expires_at > now() LIMIT $7) live) < $7
RETURNING expires_at;

-- name: find
-- parameters: id UUID
-- returns: MediaStore.StoredMedia
-- Live media by id ($1), for GET /media/{mediaId}/{file}: an expired row is gone at once, whenever the janitor
-- deletes it, and a revoked partner's media with its revocation. Probes media_pkey, then partners_pkey.
SELECT m.content_type, m.bytes, m.sha256, m.expires_at
  FROM media m
  JOIN partners p ON p.id = m.partner_id AND p.revoked_at IS NULL
 WHERE m.id = $1 AND m.expires_at > now();

-- name: attach
-- parameters: id UUID, partnerID UUID, until Date
-- returns: MediaStore.AttachedMedia
-- The partner's live media $1 ($2 the partner) for a push that expires at $3: its content type, or no row for an
-- unknown, expired or another partner's id. A push outliving the media keeps it as long as the push may still be
-- delivered: expires_at moves to $3 (a row written only then). Probes media_pkey.
WITH found AS (
    SELECT id, content_type, expires_at FROM media WHERE id = $1 AND partner_id = $2 AND expires_at > now()
), extended AS (
    UPDATE media SET expires_at = $3 FROM found WHERE media.id = found.id AND found.expires_at < $3 RETURNING media.id
)
SELECT content_type FROM found;
