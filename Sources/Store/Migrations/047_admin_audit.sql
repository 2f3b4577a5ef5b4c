-- The audit trail of admin changes (docs/security.md, *Admin audit trail*): one row per change to a partner or a
-- console session, written by triggers in the change's own transaction (functions/admin_audit*.sql), whoever made
-- it: the admin API, the console, heraldctl, or SQL by hand. Who comes from transaction-local settings the
-- intake and heraldctl set (`herald.actor`, `herald.actor_detail`, `herald.client`); a change without them is
-- recorded as `database` with the role that made it. Never a key, a key's hash or a webhook secret.
CREATE TABLE admin_audit (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- 'admin_token', 'admin_token_previous', 'console', 'heraldctl' or 'database'.
    actor        text NOT NULL,
    -- The console session (the first 12 hex digits of its hash), heraldctl's OS user, the database role.
    actor_detail text,
    -- X-Forwarded-For as the intake received it (at most 128 characters).
    client       text,
    action       text NOT NULL,
    partner_id   uuid,
    mini_app_id  text,
    detail       jsonb NOT NULL DEFAULT '{}'
);
-- The list, newest first (by id: ids rise with time), whole or of one partner.
CREATE INDEX admin_audit_partner ON admin_audit (partner_id, id) WHERE partner_id IS NOT NULL;
-- The janitor's retention (HERALD_AUDIT_RETENTION_DAYS).
CREATE INDEX admin_audit_at ON admin_audit (at);
