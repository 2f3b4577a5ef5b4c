-- The admin audit trail of console sign-ins and sign-outs (047_admin_audit.sql); the session is named by the
-- first 12 hex digits of its token's hash, never the token.
CREATE OR REPLACE FUNCTION herald_console_sessions_audit() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM herald_admin_audit('console.signed_in', NULL, NULL, jsonb_build_object(
            'session', left(NEW.token_hash, 12), 'expiresAt', herald_iso8601(NEW.expires_at)));
    ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
        PERFORM herald_admin_audit('console.signed_out', NULL, NULL,
                                   jsonb_build_object('session', left(NEW.token_hash, 12)));
    END IF;
    RETURN NULL;
END
$$;
