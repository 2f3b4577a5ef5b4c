-- Console sign-ins and sign-outs are audited (functions/console_sessions_audit.sql).
CREATE OR REPLACE TRIGGER console_sessions_audited
    AFTER INSERT OR UPDATE OF revoked_at ON console_sessions FOR EACH ROW
    EXECUTE FUNCTION herald_console_sessions_audit();
