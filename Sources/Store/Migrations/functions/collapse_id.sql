-- The collapse id of a push with a collapse key: 64 hex digits of SHA-256 over the mini-app id and the key, so two
-- mini-apps' keys never meet on a device and the id fits APNs' 64 bytes whatever the two lengths. The one place it is
-- derived: every writer of an audit row with a key passes it to the outbox writer (functions/outbox_write.sql).
CREATE OR REPLACE FUNCTION herald_collapse_id(p_mini_app text, p_key text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT encode(sha256(convert_to(p_mini_app || chr(10) || p_key, 'UTF8')), 'hex')
$$;
