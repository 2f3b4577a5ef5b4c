-- Rich media a partner uploads (or has Herald fetch) for its pushes (docs/api.md, "Media"). The intake decodes the
-- image, drops every metadata chunk by re-encoding it (Sources/Icons/MediaTranscoder.swift), stores the result here
-- and serves it at GET /media/{mediaId}/{file} with a signed file name; a push naming the media carries that URL as
-- `attachmentUrl`, so the phone downloads it from Herald and never from the partner. A row lives until expires_at
-- (HERALD_MEDIA_TTL_HOURS after its upload, pushed later by a push whose own expiry is later), then the janitor
-- deletes it (Queries/maintenance.sql, deleteExpiredMedia) and it is 404 from the moment it expires.
CREATE TABLE media (
    id           uuid PRIMARY KEY,
    partner_id   uuid NOT NULL REFERENCES partners (id),
    content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
    bytes        bytea NOT NULL,
    -- The bytes' SHA-256 (hex): the ETag they are served with.
    sha256       text NOT NULL,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL
);
-- PNG and JPEG are compressed already: stored out of line without a second, useless compression attempt.
ALTER TABLE media ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- A partner's live media, counted against its cap at each upload (Queries/media.sql, insert).
CREATE INDEX media_partner_expires ON media (partner_id, expires_at);
-- The janitor's walk of expired rows.
CREATE INDEX media_expires ON media (expires_at);
