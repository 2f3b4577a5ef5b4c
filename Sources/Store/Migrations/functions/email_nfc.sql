-- Stores every email of user_emails in Unicode NFC, so an address typed with combining characters
-- and its precomposed form are one identifier (lookups normalise the same way).
CREATE OR REPLACE FUNCTION herald_email_nfc() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.email IS NOT NFC NORMALIZED THEN
        NEW.email := normalize(NEW.email, NFC);
    END IF;
    RETURN NEW;
END
$$;
