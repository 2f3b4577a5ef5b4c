-- The schema the numbered migrations 001-053 leave: tables, types, indexes and constraints, without the
-- functions, triggers and views, which functions/*.sql define and `heraldctl migrate` applies after this file.
-- A database with no migration recorded runs this file alone and is recorded at version 53; one recorded
-- below 53 upgrades through 001-053 instead (Sources/Store/Migrator.swift). Made from `pg_dump --schema-only`
-- of a database migrated through 001-053, without the monthly partitions, which the end of this file makes.

CREATE DOMAIN delivery_activity_event AS text
	CONSTRAINT delivery_activity_event_known CHECK ((VALUE = ANY (ARRAY['start'::text, 'update'::text, 'end'::text])));

CREATE DOMAIN delivery_environment AS text
	CONSTRAINT delivery_environment_known CHECK ((VALUE = ANY (ARRAY['production'::text, 'sandbox'::text])));

CREATE DOMAIN delivery_interruption_level AS text
	CONSTRAINT delivery_interruption_level_known CHECK ((VALUE = ANY (ARRAY['passive'::text, 'active'::text,
     'time-sensitive'::text])));

CREATE DOMAIN delivery_service AS text
	CONSTRAINT delivery_service_known CHECK ((VALUE = ANY (ARRAY['apns'::text, 'fcm'::text])));

CREATE DOMAIN delivery_state AS text
	CONSTRAINT delivery_state_known CHECK ((VALUE = ANY (ARRAY['pending'::text, 'leased'::text])));

CREATE TABLE admin_audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    actor text NOT NULL,
    actor_detail text,
    client text,
    action text NOT NULL,
    partner_id uuid,
    mini_app_id text,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL
);

ALTER TABLE admin_audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME admin_audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE backfill_keys (
    partner_id uuid NOT NULL,
    key text NOT NULL,
    request_id uuid NOT NULL,
    run_id uuid NOT NULL,
    line integer NOT NULL,
    created_at timestamp with time zone NOT NULL
);

CREATE TABLE console_sessions (
    token_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    client text,
    admin_token_mac text,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE console_sign_in_failures (
    client text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    failures integer NOT NULL,
    CONSTRAINT console_sign_in_failures_failures_check CHECK ((failures >= 0))
);

CREATE TABLE deliveries (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    request_created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint DEFAULT 0 NOT NULL,
    state delivery_state DEFAULT 'pending'::text NOT NULL,
    service delivery_service NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    environment delivery_environment NOT NULL,
    payload text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    available_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone,
    lease_expires_at timestamp with time zone,
    leased_by text,
    last_error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    activity_id uuid,
    activity_event delivery_activity_event,
    priority smallint,
    member_count integer DEFAULT 1 NOT NULL,
    members uuid[],
    member_users text[],
    member_devices text[],
    member_payloads text[],
    members_done integer[],
    activity_event_id uuid,
    interruption_level delivery_interruption_level,
    CONSTRAINT deliveries_members_shape CHECK ((((members IS NULL) = (member_count = 1)) AND ((members IS NULL) OR
        (activity_id IS NULL))))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000',
    autovacuum_vacuum_insert_scale_factor='0.05', autovacuum_vacuum_cost_delay='0',
    autovacuum_analyze_scale_factor='0.02', fillfactor='100');

CREATE TABLE delivery_history (
    id uuid NOT NULL,
    request_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    lane smallint NOT NULL,
    service text NOT NULL,
    user_id text NOT NULL,
    device_id text NOT NULL,
    outcome text NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone NOT NULL,
    activity_event text,
    request_created_at timestamp with time zone,
    payload text,
    replayed_at timestamp with time zone,
    members uuid[],
    member_users text[],
    member_devices text[],
    CONSTRAINT delivery_history_outcome_check CHECK ((outcome = ANY (ARRAY['sent'::text, 'failed'::text, 'dead'::text,
        'token_invalid'::text, 'expired'::text, 'suppressed'::text, 'superseded'::text, 'cancelled'::text])))
)
PARTITION BY RANGE (finished_at);
ALTER TABLE ONLY delivery_history ALTER COLUMN payload SET STATISTICS 0;
ALTER TABLE ONLY delivery_history ALTER COLUMN members SET STATISTICS 0;
ALTER TABLE ONLY delivery_history ALTER COLUMN member_users SET STATISTICS 0;
ALTER TABLE ONLY delivery_history ALTER COLUMN member_devices SET STATISTICS 0;

CREATE TABLE device_push_to_start_tokens (
    user_id text NOT NULL,
    device_id text NOT NULL,
    template text NOT NULL,
    token text NOT NULL,
    invalidated_at timestamp with time zone,
    invalid_reason text
);

CREATE TABLE devices (
    user_id text NOT NULL,
    device_id text NOT NULL,
    platform text NOT NULL,
    environment text NOT NULL,
    bundle_id text,
    apns_token text,
    apns_token_invalidated_at timestamp with time zone,
    apns_push_to_start_token text,
    apns_push_to_start_invalidated_at timestamp with time zone,
    fcm_token text,
    fcm_token_invalidated_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    apns_token_invalid_reason text,
    apns_push_to_start_invalid_reason text,
    fcm_token_invalid_reason text,
    registered_at timestamp with time zone,
    CONSTRAINT devices_environment_check CHECK ((environment = ANY (ARRAY['production'::text, 'sandbox'::text]))),
    CONSTRAINT devices_platform_check CHECK ((platform = ANY (ARRAY['ios'::text, 'android'::text])))
);

CREATE TABLE idempotency_keys (
    partner_id uuid NOT NULL,
    key text NOT NULL,
    body_hash text NOT NULL,
    request_id uuid NOT NULL,
    response text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    status smallint DEFAULT 202 NOT NULL
)
WITH (autovacuum_analyze_scale_factor='0.02', autovacuum_analyze_threshold='200');

CREATE TABLE live_activities (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    user_id text NOT NULL,
    template text NOT NULL,
    attributes jsonb NOT NULL,
    state jsonb NOT NULL,
    start_alert jsonb NOT NULL,
    status text DEFAULT 'active'::text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    last_timestamp bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    dismiss_at timestamp with time zone,
    apns_update_payload text,
    apns_update_priority smallint,
    apns_end_payload text NOT NULL,
    fcm_end_payload text NOT NULL,
    end_timestamp bigint NOT NULL,
    relevance_score smallint DEFAULT 50 NOT NULL,
    alerted_at timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[] NOT NULL,
    apns_end_priority smallint DEFAULT 5 NOT NULL,
    channel_id uuid,
    CONSTRAINT live_activities_relevance_score_check CHECK (((relevance_score >= 0) AND (relevance_score <= 100))),
    CONSTRAINT live_activities_status_check CHECK ((status = ANY (ARRAY['active'::text, 'ended'::text,
        'replaced'::text, 'expired'::text, 'dismissed'::text]))),
    CONSTRAINT live_activities_template_check CHECK ((template = ANY (ARRAY['progress'::text, 'status'::text,
        'countdown'::text])))
)
WITH (autovacuum_analyze_scale_factor='0.02', autovacuum_vacuum_scale_factor='0.05');

CREATE TABLE live_activity_events (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    activity_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    devices_apns integer NOT NULL,
    devices_fcm integer NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    superseded integer DEFAULT 0 NOT NULL,
    CONSTRAINT live_activity_events_kind_check CHECK ((kind = ANY (ARRAY['start'::text, 'update'::text, 'end'::text,
        'expire'::text, 'replace-end'::text, 'revoke-end'::text])))
)
PARTITION BY RANGE (created_at);

CREATE TABLE live_activity_targets (
    activity_id uuid NOT NULL,
    device_id text NOT NULL,
    service text NOT NULL,
    update_token text,
    update_token_invalidated_at timestamp with time zone,
    held_event text,
    device_state text,
    device_state_at timestamp with time zone,
    start_sent_at timestamp with time zone,
    held_event_id uuid,
    CONSTRAINT live_activity_targets_device_state_check CHECK ((device_state = ANY (ARRAY['active'::text,
        'dismissed'::text, 'ended'::text, 'stale'::text, 'unconfirmed'::text]))),
    CONSTRAINT live_activity_targets_held_event_check CHECK ((held_event = ANY (ARRAY['update'::text, 'end'::text]))),
    CONSTRAINT live_activity_targets_service_check CHECK ((service = ANY (ARRAY['apns'::text, 'fcm'::text])))
);

CREATE TABLE live_channel_events (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    channel_id uuid NOT NULL,
    partner_id uuid NOT NULL,
    kind text NOT NULL,
    state jsonb,
    alert_title text,
    ttl_seconds integer,
    dismiss_at timestamp with time zone,
    idempotency_key text,
    version integer NOT NULL,
    outcome text DEFAULT 'pending'::text NOT NULL,
    reason text,
    finished_at timestamp with time zone,
    CONSTRAINT live_channel_events_kind_check CHECK ((kind = ANY (ARRAY['open'::text, 'update'::text, 'end'::text,
        'expire'::text]))),
    CONSTRAINT live_channel_events_outcome_check CHECK ((outcome = ANY (ARRAY['pending'::text, 'sent'::text,
        'superseded'::text, 'failed'::text, 'not_sent'::text])))
);

CREATE TABLE live_channels (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    template text NOT NULL,
    attributes jsonb NOT NULL,
    state jsonb NOT NULL,
    status text DEFAULT 'opening'::text NOT NULL,
    apns_channel_id text,
    environment text,
    version integer DEFAULT 1 NOT NULL,
    sent_version integer DEFAULT 1 NOT NULL,
    last_timestamp bigint NOT NULL,
    relevance_score smallint NOT NULL,
    apns_payload text,
    apns_priority smallint,
    apns_end_payload text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    ended_at timestamp with time zone,
    delete_at timestamp with time zone,
    next_at timestamp with time zone NOT NULL,
    leased_until timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    failure text,
    broadcasts integer DEFAULT 0 NOT NULL,
    alerted_at timestamp with time zone[] DEFAULT '{}'::timestamp with time zone[] NOT NULL,
    CONSTRAINT live_channels_environment_check CHECK ((environment = ANY (ARRAY['production'::text, 'sandbox'::text]))),
    CONSTRAINT live_channels_status_check CHECK ((status = ANY (ARRAY['opening'::text, 'open'::text, 'ending'::text,
        'ended'::text, 'failed'::text]))),
    CONSTRAINT live_channels_template_check CHECK ((template = ANY (ARRAY['progress'::text, 'status'::text,
        'countdown'::text])))
);

CREATE TABLE mini_app_sessions (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    last_seen_at timestamp with time zone NOT NULL
);

CREATE TABLE opt_outs (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    opted_out_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE partner_icons (
    partner_id uuid NOT NULL,
    size integer NOT NULL,
    png bytea NOT NULL,
    sha256 text NOT NULL,
    CONSTRAINT partner_icons_size_check CHECK ((size = ANY (ARRAY[64, 128, 256])))
);

CREATE TABLE partners (
    id uuid NOT NULL,
    mini_app_id text NOT NULL,
    display_name text NOT NULL,
    tenant_id text NOT NULL,
    key_hash text NOT NULL,
    rate_limit_per_minute integer NOT NULL,
    rate_limit_per_day integer NOT NULL,
    icon_url text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    icon_updated_at timestamp with time zone,
    webhook_url text,
    webhook_secret text,
    sound text DEFAULT 'default'::text,
    allow_time_sensitive boolean DEFAULT false NOT NULL,
    previous_key_hash text,
    previous_key_expires_at timestamp with time zone,
    suspended_at timestamp with time zone,
    previous_webhook_secret text,
    previous_webhook_secret_expires_at timestamp with time zone,
    CONSTRAINT partners_previous_key_whole CHECK (((previous_key_hash IS NULL) = (previous_key_expires_at IS NULL))),
    CONSTRAINT partners_previous_webhook_secret_whole CHECK (((previous_webhook_secret IS NULL) =
        (previous_webhook_secret_expires_at IS NULL))),
    CONSTRAINT partners_previous_webhook_secret_with_webhook CHECK (((previous_webhook_secret IS NULL) OR
        (webhook_secret IS NOT NULL))),
    CONSTRAINT partners_rate_limit_per_day_check CHECK ((rate_limit_per_day > 0)),
    CONSTRAINT partners_rate_limit_per_minute_check CHECK ((rate_limit_per_minute > 0)),
    CONSTRAINT partners_sound_name CHECK (char_length(sound) >= 1 AND char_length(sound) <= 64
                                          AND strpos(sound, '/') = 0 AND strpos(sound, '\') = 0),
    CONSTRAINT partners_webhook_pair CHECK (((webhook_url IS NULL) = (webhook_secret IS NULL)))
);

CREATE TABLE push_requests (
    id uuid NOT NULL,
    created_at timestamp with time zone NOT NULL,
    partner_id uuid NOT NULL,
    mini_app_id text NOT NULL,
    idempotency_key text,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    data jsonb NOT NULL,
    send_at timestamp with time zone,
    ttl_seconds integer,
    expires_at timestamp with time zone,
    lane smallint NOT NULL,
    recipients integer NOT NULL,
    deliveries integer NOT NULL,
    suppressed integer NOT NULL,
    missing jsonb NOT NULL,
    sent integer DEFAULT 0 NOT NULL,
    failed integer DEFAULT 0 NOT NULL,
    suppressed_deliveries integer DEFAULT 0 NOT NULL
)
PARTITION BY RANGE (created_at);

CREATE TABLE rate_buckets (
    partner_id uuid NOT NULL,
    granularity "char" NOT NULL,
    bucket bigint NOT NULL,
    count integer NOT NULL
);

CREATE TABLE rate_windows (
    partner_id uuid NOT NULL,
    minute_edge bigint NOT NULL,
    minute_count integer NOT NULL,
    day_edge bigint NOT NULL,
    day_count integer NOT NULL
);

CREATE TABLE reminders (
    id uuid NOT NULL,
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    partner_id uuid NOT NULL,
    request_id uuid NOT NULL,
    request_created_at timestamp with time zone NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    deep_link text,
    at timestamp with time zone NOT NULL,
    deliveries uuid[] NOT NULL,
    status text DEFAULT 'scheduled'::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    idempotency_key text,
    body_hash text,
    CONSTRAINT reminders_deliveries_check CHECK ((cardinality(deliveries) > 0)),
    CONSTRAINT reminders_status_check CHECK ((status = ANY (ARRAY['scheduled'::text, 'sent'::text, 'cancelled'::text])))
);

CREATE TABLE tenants (
    id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE user_emails (
    tenant_id text NOT NULL,
    email text NOT NULL,
    user_id text NOT NULL
);

CREATE TABLE user_push_windows (
    user_id text NOT NULL,
    requests uuid[] NOT NULL,
    taken_at timestamp with time zone[] NOT NULL
);

CREATE TABLE user_senders (
    user_id text NOT NULL,
    mini_app_id text NOT NULL,
    first_sent_at timestamp with time zone NOT NULL
);

CREATE TABLE user_wallets (
    tenant_id text NOT NULL,
    wallet text NOT NULL,
    user_id text NOT NULL
);

CREATE TABLE users (
    id text NOT NULL,
    tenant_id text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    time_zone text,
    quiet_start time without time zone,
    quiet_end time without time zone,
    CONSTRAINT users_quiet_hours CHECK ((((quiet_start IS NULL) = (quiet_end IS NULL)) AND (quiet_start <> quiet_end)))
);

CREATE TABLE webhook_events (
    id uuid NOT NULL,
    partner_id uuid NOT NULL,
    type text NOT NULL,
    subject_id uuid NOT NULL,
    body text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    window_start timestamp with time zone NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    available_at timestamp with time zone NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    leased_by text,
    lease_expires_at timestamp with time zone,
    last_status integer,
    last_error text,
    finished_at timestamp with time zone,
    CONSTRAINT webhook_events_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'sending'::text,
        'delivered'::text, 'failed'::text]))),
    CONSTRAINT webhook_events_type_check CHECK ((type = ANY (ARRAY['push.completed'::text, 'activity.ended'::text,
        'activity.expired'::text, 'activity.dismissed'::text])))
);

CREATE TABLE worker_heartbeats (
    worker_id text NOT NULL,
    host text NOT NULL,
    version text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    last_seen_at timestamp with time zone NOT NULL,
    in_flight integer NOT NULL,
    paused_upstreams text[] DEFAULT '{}'::text[] NOT NULL,
    claims_per_second double precision NOT NULL,
    interval_seconds double precision NOT NULL,
    CONSTRAINT worker_heartbeats_claims_per_second_check CHECK ((claims_per_second >= (0)::double precision)),
    CONSTRAINT worker_heartbeats_in_flight_check CHECK ((in_flight >= 0)),
    CONSTRAINT worker_heartbeats_interval_seconds_check CHECK ((interval_seconds > (0)::double precision))
);

CREATE TABLE worker_listeners (
    pid integer NOT NULL,
    worker_id text NOT NULL,
    lease_seconds integer NOT NULL,
    registered_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT worker_listeners_lease_seconds_check CHECK ((lease_seconds > 0))
);

ALTER TABLE ONLY admin_audit
    ADD CONSTRAINT admin_audit_pkey PRIMARY KEY (id);

ALTER TABLE ONLY backfill_keys
    ADD CONSTRAINT backfill_keys_pkey PRIMARY KEY (partner_id, key);

ALTER TABLE ONLY console_sessions
    ADD CONSTRAINT console_sessions_pkey PRIMARY KEY (token_hash);

ALTER TABLE ONLY console_sign_in_failures
    ADD CONSTRAINT console_sign_in_failures_pkey PRIMARY KEY (client);

ALTER TABLE ONLY deliveries
    ADD CONSTRAINT deliveries_pkey PRIMARY KEY (id);

ALTER TABLE ONLY device_push_to_start_tokens
    ADD CONSTRAINT device_push_to_start_tokens_pkey PRIMARY KEY (user_id, device_id, template);

ALTER TABLE ONLY devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (user_id, device_id);

ALTER TABLE ONLY idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (partner_id, key);

ALTER TABLE ONLY live_activities
    ADD CONSTRAINT live_activities_pkey PRIMARY KEY (id);

ALTER TABLE ONLY live_activity_events
    ADD CONSTRAINT live_activity_events_pkey PRIMARY KEY (id, created_at);

ALTER TABLE ONLY live_activity_targets
    ADD CONSTRAINT live_activity_targets_pkey PRIMARY KEY (activity_id, device_id);

ALTER TABLE ONLY live_channel_events
    ADD CONSTRAINT live_channel_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY live_channels
    ADD CONSTRAINT live_channels_pkey PRIMARY KEY (id);

ALTER TABLE ONLY mini_app_sessions
    ADD CONSTRAINT mini_app_sessions_pkey PRIMARY KEY (user_id, mini_app_id);

ALTER TABLE ONLY opt_outs
    ADD CONSTRAINT opt_outs_pkey PRIMARY KEY (user_id, mini_app_id);

ALTER TABLE ONLY partner_icons
    ADD CONSTRAINT partner_icons_pkey PRIMARY KEY (partner_id, size);

ALTER TABLE ONLY partners
    ADD CONSTRAINT partners_key_hash_key UNIQUE (key_hash);

ALTER TABLE ONLY partners
    ADD CONSTRAINT partners_pkey PRIMARY KEY (id);

ALTER TABLE ONLY partners
    ADD CONSTRAINT partners_previous_key_hash_key UNIQUE (previous_key_hash);

ALTER TABLE ONLY push_requests
    ADD CONSTRAINT push_requests_pkey PRIMARY KEY (id, created_at);

ALTER TABLE ONLY rate_buckets
    ADD CONSTRAINT rate_buckets_pkey PRIMARY KEY (partner_id, granularity, bucket);

ALTER TABLE ONLY rate_windows
    ADD CONSTRAINT rate_windows_pkey PRIMARY KEY (partner_id);

ALTER TABLE ONLY reminders
    ADD CONSTRAINT reminders_pkey PRIMARY KEY (id);

ALTER TABLE ONLY reminders
    ADD CONSTRAINT reminders_request_id_key UNIQUE (request_id);

ALTER TABLE ONLY tenants
    ADD CONSTRAINT tenants_pkey PRIMARY KEY (id);

ALTER TABLE ONLY user_emails
    ADD CONSTRAINT user_emails_pkey PRIMARY KEY (tenant_id, email);

ALTER TABLE ONLY user_push_windows
    ADD CONSTRAINT user_push_windows_pkey PRIMARY KEY (user_id);

ALTER TABLE ONLY user_senders
    ADD CONSTRAINT user_senders_pkey PRIMARY KEY (user_id, mini_app_id);

ALTER TABLE ONLY user_wallets
    ADD CONSTRAINT user_wallets_pkey PRIMARY KEY (tenant_id, wallet);

ALTER TABLE ONLY users
    ADD CONSTRAINT users_id_tenant_id_key UNIQUE (id, tenant_id);

ALTER TABLE ONLY users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

ALTER TABLE ONLY webhook_events
    ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);

ALTER TABLE ONLY worker_heartbeats
    ADD CONSTRAINT worker_heartbeats_pkey PRIMARY KEY (worker_id);

ALTER TABLE ONLY worker_listeners
    ADD CONSTRAINT worker_listeners_pkey PRIMARY KEY (pid);

CREATE INDEX admin_audit_at ON admin_audit USING btree (at);

CREATE INDEX admin_audit_partner ON admin_audit USING btree (partner_id, id) WHERE (partner_id IS NOT NULL);

CREATE INDEX console_sessions_expires ON console_sessions USING btree (expires_at);

CREATE INDEX console_sign_in_failures_window ON console_sign_in_failures USING btree (window_start);

CREATE INDEX deliveries_activity ON deliveries USING btree (activity_id, device_id) WHERE (activity_id IS NOT NULL);

CREATE INDEX deliveries_due_partner ON deliveries USING btree (lane, partner_id, available_at, member_count) WHERE
    ((state)::text = 'pending'::text);

CREATE INDEX deliveries_held_request ON deliveries USING btree (request_id) WHERE ((last_error = 'quiet_hours'::text)
    AND ((state)::text = 'pending'::text));

CREATE INDEX deliveries_held_user ON deliveries USING btree (user_id) WHERE ((last_error = 'quiet_hours'::text) AND
    ((state)::text = 'pending'::text));

CREATE INDEX deliveries_lease ON deliveries USING btree (lease_expires_at) WHERE ((state)::text = 'leased'::text);

CREATE INDEX delivery_history_replayable ON ONLY delivery_history USING btree (finished_at) WHERE ((outcome = ANY
    (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));

CREATE INDEX delivery_history_finished ON ONLY delivery_history USING brin (finished_at) WITH (pages_per_range='32');

CREATE INDEX delivery_history_token_invalid ON ONLY delivery_history USING btree (finished_at) WHERE (outcome =
    'token_invalid'::text);

CREATE INDEX delivery_history_replayable_partner ON ONLY delivery_history USING btree (partner_id, finished_at) WHERE
    ((outcome = ANY (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));

CREATE INDEX delivery_history_request ON ONLY delivery_history USING btree (request_id) WHERE ((outcome = ANY
    (ARRAY['failed'::text, 'dead'::text, 'expired'::text])) AND (activity_event IS NULL));

CREATE INDEX device_push_to_start_tokens_token ON device_push_to_start_tokens USING hash (token);

CREATE INDEX devices_apns_token ON devices USING hash (apns_token) WHERE (apns_token IS NOT NULL);

CREATE INDEX devices_fcm_token ON devices USING hash (fcm_token) WHERE (fcm_token IS NOT NULL);

CREATE INDEX devices_push_to_start_token ON devices USING hash (apns_push_to_start_token) WHERE
    (apns_push_to_start_token IS NOT NULL);

CREATE INDEX idempotency_keys_created ON idempotency_keys USING btree (created_at);

CREATE INDEX live_activities_channel ON live_activities USING btree (channel_id) WHERE ((status = 'active'::text) AND
    (channel_id IS NOT NULL));

CREATE INDEX live_activities_due ON live_activities USING btree (expires_at) WHERE (status = 'active'::text);

CREATE INDEX live_activities_ended ON live_activities USING btree (ended_at) WHERE (status <> 'active'::text);

CREATE UNIQUE INDEX live_activities_one_active ON live_activities USING btree (user_id, mini_app_id) WHERE (status =
    'active'::text);

CREATE INDEX live_activities_partner_active ON live_activities USING btree (partner_id) WHERE (status = 'active'::text);

CREATE INDEX live_activities_user_starts ON live_activities USING btree (user_id, created_at);

CREATE INDEX live_activity_events_activity ON ONLY live_activity_events USING btree (activity_id, created_at DESC, id
    DESC);

CREATE INDEX live_activity_targets_awaiting_token ON live_activity_targets USING btree (start_sent_at) WHERE ((service
    = 'apns'::text) AND (update_token IS NULL) AND (device_state IS NULL) AND (start_sent_at IS NOT NULL));

CREATE INDEX live_channel_events_channel ON live_channel_events USING btree (channel_id, created_at DESC, id DESC);

CREATE INDEX live_channel_events_pending ON live_channel_events USING btree (channel_id, version) WHERE (outcome =
    'pending'::text);

CREATE INDEX live_channels_due ON live_channels USING btree (next_at) WHERE (status = ANY (ARRAY['opening'::text,
    'open'::text, 'ending'::text]));

CREATE INDEX live_channels_finished ON live_channels USING btree (updated_at) WHERE (status = ANY
    (ARRAY['ended'::text, 'failed'::text]));

CREATE INDEX live_channels_mini_app ON live_channels USING btree (mini_app_id, created_at) WHERE (status = ANY
    (ARRAY['opening'::text, 'open'::text]));

CREATE UNIQUE INDEX partners_active_mini_app ON partners USING btree (mini_app_id) WHERE (revoked_at IS NULL);

CREATE INDEX push_requests_mini_app ON ONLY push_requests USING btree (mini_app_id, id);

CREATE INDEX reminders_at ON reminders USING btree (at);

CREATE UNIQUE INDEX reminders_idempotency ON reminders USING btree (user_id, idempotency_key) WHERE (idempotency_key
    IS NOT NULL);

CREATE INDEX reminders_partner_scheduled ON reminders USING btree (partner_id) WHERE (status = 'scheduled'::text);

CREATE INDEX reminders_scheduled ON reminders USING btree (user_id, mini_app_id, at) WHERE (status = 'scheduled'::text);

CREATE INDEX user_emails_user ON user_emails USING btree (user_id);

CREATE INDEX user_wallets_user ON user_wallets USING btree (user_id);

CREATE INDEX users_quiet_hours ON users USING btree (id) WHERE (quiet_start IS NOT NULL);

CREATE INDEX webhook_events_due ON webhook_events USING btree (available_at) WHERE (state = 'pending'::text);

CREATE INDEX webhook_events_failed ON webhook_events USING btree (partner_id, finished_at) WHERE (state =
    'failed'::text);

CREATE INDEX webhook_events_finished ON webhook_events USING btree (finished_at) WHERE (state = ANY
    (ARRAY['delivered'::text, 'failed'::text]));

CREATE INDEX webhook_events_sending ON webhook_events USING btree (lease_expires_at) WHERE (state = 'sending'::text);

CREATE INDEX worker_heartbeats_last_seen ON worker_heartbeats USING btree (last_seen_at);

ALTER TABLE ONLY device_push_to_start_tokens
    ADD CONSTRAINT device_push_to_start_tokens_user_id_device_id_fkey FOREIGN KEY (user_id, device_id) REFERENCES
        devices(user_id, device_id) ON DELETE CASCADE;

ALTER TABLE ONLY devices
    ADD CONSTRAINT devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY live_activities
    ADD CONSTRAINT live_activities_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY live_activity_targets
    ADD CONSTRAINT live_activity_targets_activity_id_fkey FOREIGN KEY (activity_id) REFERENCES live_activities(id) ON
        DELETE CASCADE;

ALTER TABLE ONLY live_channel_events
    ADD CONSTRAINT live_channel_events_channel_id_fkey FOREIGN KEY (channel_id) REFERENCES live_channels(id) ON DELETE
        CASCADE;

ALTER TABLE ONLY mini_app_sessions
    ADD CONSTRAINT mini_app_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY opt_outs
    ADD CONSTRAINT opt_outs_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY partner_icons
    ADD CONSTRAINT partner_icons_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id);

ALTER TABLE ONLY partners
    ADD CONSTRAINT partners_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id);

ALTER TABLE ONLY reminders
    ADD CONSTRAINT reminders_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY user_emails
    ADD CONSTRAINT user_emails_user_id_tenant_id_fkey FOREIGN KEY (user_id, tenant_id) REFERENCES users(id, tenant_id)
        ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY user_senders
    ADD CONSTRAINT user_senders_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id) ON DELETE CASCADE;

ALTER TABLE ONLY user_wallets
    ADD CONSTRAINT user_wallets_user_id_tenant_id_fkey FOREIGN KEY (user_id, tenant_id) REFERENCES users(id,
        tenant_id) ON UPDATE CASCADE ON DELETE CASCADE;

ALTER TABLE ONLY users
    ADD CONSTRAINT users_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id);


-- The monthly partitions from last month, five months, as the migrations made them;
-- functions/ensure_monthly_partitions.sql makes the later ones (`heraldctl partitions`, the intake's janitor).
DO $$
DECLARE
    first_month date := date_trunc('month', (now() - interval '1 month') AT TIME ZONE 'UTC')::date;
    lower_bound date;
    parent text;
BEGIN
    FOREACH parent IN ARRAY ARRAY['push_requests', 'delivery_history', 'live_activity_events'] LOOP
        FOR i IN 0 .. 4 LOOP
            lower_bound := first_month + make_interval(months => i);
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                           parent || to_char(lower_bound, '_YYYY_MM'), parent,
                           lower_bound::timestamp AT TIME ZONE 'UTC',
                           (lower_bound + interval '1 month')::timestamp AT TIME ZONE 'UTC');
        END LOOP;
    END LOOP;
END
$$;

-- No planner statistics for the history's columns that are only read, never searched (as 023 set them);
-- on the parent, ALTER reaches the partitions just made.
ALTER TABLE delivery_history
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN members SET STATISTICS 0,
    ALTER COLUMN member_users SET STATISTICS 0,
    ALTER COLUMN member_devices SET STATISTICS 0;
