-- A webhook secret rotated with an overlap keeps signing until previous_webhook_secret_expires_at: each event sent
-- meanwhile carries a v1= signature with either secret, so the partner can deploy the new secret before the old one
-- stops. One previous secret at most (rotating again replaces it); a new webhookUrl, or none, clears it.
ALTER TABLE partners
    ADD COLUMN previous_webhook_secret text,
    ADD COLUMN previous_webhook_secret_expires_at timestamptz,
    ADD CONSTRAINT partners_previous_webhook_secret_whole
        CHECK ((previous_webhook_secret IS NULL) = (previous_webhook_secret_expires_at IS NULL)),
    ADD CONSTRAINT partners_previous_webhook_secret_with_webhook
        CHECK (previous_webhook_secret IS NULL OR webhook_secret IS NOT NULL);

-- The claim returns the previous secret beside the current one (functions/webhook_claim.sql), a new result type,
-- which the definitions folder creates again.
DROP FUNCTION IF EXISTS herald_webhook_claim(text, integer, integer, uuid[], integer[], integer, timestamptz);
