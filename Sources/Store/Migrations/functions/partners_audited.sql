-- Every partner insert and update is audited (functions/partners_audit.sql).
CREATE OR REPLACE TRIGGER partners_audited
    AFTER INSERT OR UPDATE ON partners FOR EACH ROW
    EXECUTE FUNCTION herald_partners_audit();
