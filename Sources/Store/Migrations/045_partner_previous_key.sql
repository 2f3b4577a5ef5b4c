-- A partner key rotated with an overlap keeps working until previous_key_expires_at, so the partner can deploy
-- the new key before the old one is refused. One previous key at most: rotating again replaces it.
ALTER TABLE partners
    ADD COLUMN previous_key_hash text UNIQUE,
    ADD COLUMN previous_key_expires_at timestamptz,
    ADD CONSTRAINT partners_previous_key_whole
        CHECK ((previous_key_hash IS NULL) = (previous_key_expires_at IS NULL));
