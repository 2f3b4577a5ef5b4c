-- Mini-app partners and their sliding-window rate limits.

CREATE TABLE partners (
    id                    uuid PRIMARY KEY,
    mini_app_id           text NOT NULL,
    display_name          text NOT NULL,
    tenant_id             text NOT NULL REFERENCES tenants (id),
    -- SHA-256 (hex) of the `mp_` key; the key itself is never stored.
    key_hash              text NOT NULL UNIQUE,
    rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute > 0),
    rate_limit_per_day    integer NOT NULL CHECK (rate_limit_per_day > 0),
    icon_url              text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    revoked_at            timestamptz
);
-- One active partner per mini-app; a revoked one may be replaced.
CREATE UNIQUE INDEX partners_active_mini_app ON partners (mini_app_id) WHERE revoked_at IS NULL;

-- Accepted requests counted per second (granularity 's', for the minute window) and per minute
-- ('m', for the day window). Old buckets are deleted by the intake's janitor.
CREATE TABLE rate_buckets (
    partner_id  uuid NOT NULL,
    granularity "char" NOT NULL,
    bucket      bigint NOT NULL,
    count       integer NOT NULL,
    PRIMARY KEY (partner_id, granularity, bucket)
);
