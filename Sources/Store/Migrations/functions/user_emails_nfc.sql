-- Runs herald_email_nfc (functions/email_nfc.sql) on every written email of user_emails.
CREATE OR REPLACE TRIGGER user_emails_nfc BEFORE INSERT OR UPDATE OF email ON user_emails
    FOR EACH ROW EXECUTE FUNCTION herald_email_nfc();
