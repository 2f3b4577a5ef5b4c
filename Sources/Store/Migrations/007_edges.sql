-- Edges of the directory: a device token belongs to one device, emails in one Unicode
-- form, and every queued delivery has an expiry.

-- A device token belongs to one device. The host registers the token a phone reports;
-- when the phone changed accounts (or the app was reinstalled under another user or tenant),
-- the token moves to the new device row and leaves the old one, so the old user, the old tenant
-- and the deliveries already queued for them no longer reach that phone.
--
-- Not a unique index: a registration must take the token rather than fail, and fixtures
-- (benchmarks, query-plan tests) load many rows sharing one token straight through SQL. The
-- registration path is made race-free by a transaction-scoped advisory lock per token instead
-- (herald_put_device, functions/put_device.sql). Hash indexes: the registration finds the current holder of a token
-- with one probe, and an FCM token (up to 4,096 bytes) does not fit a btree entry.
CREATE INDEX devices_apns_token ON devices USING hash (apns_token) WHERE apns_token IS NOT NULL;
CREATE INDEX devices_push_to_start_token ON devices USING hash (apns_push_to_start_token)
    WHERE apns_push_to_start_token IS NOT NULL;
CREATE INDEX devices_fcm_token ON devices USING hash (fcm_token) WHERE fcm_token IS NOT NULL;

-- Rows that already share a token: the most recently registered one keeps it.
UPDATE devices d SET apns_token = NULL, apns_token_invalidated_at = NULL
 WHERE d.apns_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.apns_token = d.apns_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));
UPDATE devices d SET apns_push_to_start_token = NULL, apns_push_to_start_invalidated_at = NULL
 WHERE d.apns_push_to_start_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.apns_push_to_start_token = d.apns_push_to_start_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));
UPDATE devices d SET fcm_token = NULL, fcm_token_invalidated_at = NULL
 WHERE d.fcm_token IS NOT NULL AND EXISTS (
       SELECT 1 FROM devices o WHERE o.fcm_token = d.fcm_token
          AND (o.updated_at, o.user_id, o.device_id) > (d.updated_at, d.user_id, d.device_id));

-- Emails in one form: the intake stores and looks up emails lower-cased and in Unicode NFC
-- (Identifiers.normalizedEmail). Postgres compares bytes, so SQL applies NFC as well: to the rows
-- stored before (a decomposed "é" would never have matched a composed one), to every row written
-- from now on by any writer (the trigger), and to the emails a push looks up (the resolver).
-- Lower-casing stays the intake's alone: Postgres' lower() depends on the database's locale and
-- could disagree with Swift's Unicode case mapping, NFC does not.
DELETE FROM user_emails e
 USING (SELECT ctid AS row_id,
               row_number() OVER (PARTITION BY tenant_id, normalize(email, NFC)
                                  ORDER BY (email IS NFC NORMALIZED) DESC, email) AS rank
          FROM user_emails
         WHERE (tenant_id, normalize(email, NFC)) IN
               (SELECT tenant_id, normalize(email, NFC) FROM user_emails WHERE email IS NOT NFC NORMALIZED)) x
 WHERE e.ctid = x.row_id AND x.rank > 1;
UPDATE user_emails SET email = normalize(email, NFC) WHERE email IS NOT NFC NORMALIZED;

-- Every delivery has an expiry from now on (the intake sets it from ttlSeconds or
-- HERALD_DEFAULT_TTL_SECONDS); rows queued before without one get the default 28 days
-- from when they were due, so the worker never sends apns-expiration 0 for them. (The audit
-- rows in push_requests keep their NULL ttl_seconds: history, and too large to rewrite.)
UPDATE deliveries SET expires_at = available_at + interval '28 days' WHERE expires_at IS NULL;

-- A delivery's environment is one the worker knows: an unknown one must never fall through to
-- production (devices already has this CHECK; the outbox copies the device's value). NOT VALID
-- then VALIDATE: the check of existing rows does not block writers of the hot table.
ALTER TABLE deliveries ADD CONSTRAINT deliveries_environment
    CHECK (environment IN ('production', 'sandbox')) NOT VALID;
ALTER TABLE deliveries VALIDATE CONSTRAINT deliveries_environment;
