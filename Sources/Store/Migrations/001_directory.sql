-- The host's user directory: tenants, users, their identifiers and devices, sessions, opt-outs.

CREATE TABLE tenants (
    id         text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id         text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES tenants (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- Lets identifier rows reference (user, tenant) so they always carry the user's tenant.
    UNIQUE (id, tenant_id)
);

-- Identifiers are stored normalised (lower-case) and unique within a tenant, so resolving a
-- partner's recipients is an equality lookup on the primary key, never a scan.
CREATE TABLE user_emails (
    tenant_id text NOT NULL,
    email     text NOT NULL,
    user_id   text NOT NULL,
    PRIMARY KEY (tenant_id, email),
    FOREIGN KEY (user_id, tenant_id) REFERENCES users (id, tenant_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX user_emails_user ON user_emails (user_id);

CREATE TABLE user_wallets (
    tenant_id text NOT NULL,
    wallet    text NOT NULL,
    user_id   text NOT NULL,
    PRIMARY KEY (tenant_id, wallet),
    FOREIGN KEY (user_id, tenant_id) REFERENCES users (id, tenant_id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX user_wallets_user ON user_wallets (user_id);

-- One row per app installation. Each token has its own invalidation time: a token APNs or FCM
-- declared dead is never used again, until the host reports a different token.
CREATE TABLE devices (
    user_id                            text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    device_id                          text NOT NULL,
    platform                           text NOT NULL CHECK (platform IN ('ios', 'android')),
    environment                        text NOT NULL CHECK (environment IN ('production', 'sandbox')),
    bundle_id                          text,
    apns_token                         text,
    apns_token_invalidated_at          timestamptz,
    apns_push_to_start_token           text,
    apns_push_to_start_invalidated_at  timestamptz,
    fcm_token                          text,
    fcm_token_invalidated_at           timestamptz,
    created_at                         timestamptz NOT NULL DEFAULT now(),
    updated_at                         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, device_id)
);

-- In-app sessions reported by the host: a partner may start a Live Activity only for a user
-- who used its mini-app recently.
CREATE TABLE mini_app_sessions (
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mini_app_id  text NOT NULL,
    last_seen_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, mini_app_id)
);

CREATE TABLE opt_outs (
    user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mini_app_id  text NOT NULL,
    opted_out_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, mini_app_id)
);

-- Every mini-app that has pushed to a user (the Settings > Notifications > Mini-apps screen).
-- Written with ON CONFLICT DO NOTHING, so a repeat sender costs an index probe, not a write.
CREATE TABLE user_senders (
    user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mini_app_id   text NOT NULL,
    first_sent_at timestamptz NOT NULL,
    PRIMARY KEY (user_id, mini_app_id)
);
