-- Broadcast channels (iOS 18): one Live Activity that every phone following the channel shows, updated
-- by one APNs broadcast per change whatever the number of followers.
--
-- The intake writes the partner's intent and the payloads (rendered and signed there, as for every push); a
-- worker makes APNs agree with the row: it creates the APNs channel (channel management API), broadcasts the
-- newest change, and after the end deletes the APNs channel. The row says what is due:
--   opening  no APNs channel yet: create it (`apns_channel_id` then set, status 'open');
--   open     `version > sent_version`: broadcast `apns_payload` (the newest change: coalesced, never a queue);
--            at `expires_at`: the TTL's end (`apns_end_payload`) becomes the newest change, status 'ending';
--   ending   the end not broadcast yet: broadcast it; once broadcast, delete the APNs channel at `delete_at`;
--   ended    the APNs channel is deleted (or was never made): nothing more;
--   failed   APNs refused the channel for good (`failure`): nothing more.
-- `next_at` is when the row next has work (a change sets it to now). A worker that takes the row leases it
-- (`leased_until`): a worker that dies mid-call leaves the row to another after the lease, and two workers
-- never call APNs for one channel at once, so broadcasts leave in the order of their changes.
CREATE TABLE live_channels (
    id                 uuid PRIMARY KEY,
    partner_id         uuid NOT NULL,
    mini_app_id        text NOT NULL,
    template           text NOT NULL CHECK (template IN ('progress', 'status', 'countdown')),
    attributes         jsonb NOT NULL,
    state              jsonb NOT NULL,
    status             text NOT NULL DEFAULT 'opening'
                       CHECK (status IN ('opening', 'open', 'ending', 'ended', 'failed')),
    -- APNs' id (base64), once the channel exists; and the APNs environment it was made in.
    apns_channel_id    text,
    environment        text CHECK (environment IN ('production', 'sandbox')),
    -- Bumped by every change of the partner (and the TTL's end); `sent_version` is the newest broadcast.
    version            integer NOT NULL DEFAULT 1,
    sent_version       integer NOT NULL DEFAULT 1,
    -- aps.timestamp of the newest change, strictly increasing.
    last_timestamp     bigint NOT NULL,
    relevance_score    smallint NOT NULL,
    apns_payload       text,
    apns_priority      smallint,
    -- The end the TTL broadcasts (rendered with every change: it carries the newest state).
    apns_end_payload   text NOT NULL,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL,
    expires_at         timestamptz NOT NULL,
    ended_at           timestamptz,
    -- When the APNs channel is deleted after the end: its dismissal (phones offline at the end still get it
    -- while the channel lives).
    delete_at          timestamptz,
    next_at            timestamptz NOT NULL,
    -- Set while a worker calls APNs for the row: no other worker takes it until then.
    leased_until       timestamptz,
    attempts           integer NOT NULL DEFAULT 0,
    -- The last APNs refusal or transport problem (a reason, never a token).
    failure            text,
    broadcasts         integer NOT NULL DEFAULT 0,
    -- The times of its priority-10 broadcasts in the last hour (HERALD_LA_ALERTED_UPDATES_PER_HOUR, as for an
    -- activity: functions/activity_alert_spend.sql).
    alerted_at         timestamptz[] NOT NULL DEFAULT '{}'
);
-- The workers' claim: rows with work, by when it is due.
CREATE INDEX live_channels_due ON live_channels (next_at) WHERE status IN ('opening', 'open', 'ending');
-- The partner's open channels (its cap) and the host's list, per mini-app.
CREATE INDEX live_channels_mini_app ON live_channels (mini_app_id, created_at) WHERE status IN ('opening', 'open');
-- Retention deletes finished channels by age.
CREATE INDEX live_channels_finished ON live_channels (updated_at) WHERE status IN ('ended', 'failed');

-- The audit of channels: one row per open, update and end of the partner and per TTL end, with what became of
-- it ('pending' until the broadcast that carries it, or a newer change, answers).
CREATE TABLE live_channel_events (
    id              uuid PRIMARY KEY,
    created_at      timestamptz NOT NULL,
    channel_id      uuid NOT NULL REFERENCES live_channels (id) ON DELETE CASCADE,
    partner_id      uuid NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('open', 'update', 'end', 'expire')),
    -- The open's state, an update's patch as the partner sent it, the final state of an end or expiry.
    state           jsonb,
    alert_title     text,
    ttl_seconds     integer,
    dismiss_at      timestamptz,
    idempotency_key text,
    -- The channel's version this event made.
    version         integer NOT NULL,
    outcome         text NOT NULL DEFAULT 'pending'
                    CHECK (outcome IN ('pending', 'sent', 'superseded', 'failed', 'not_sent')),
    reason          text,
    finished_at     timestamptz
);
CREATE INDEX live_channel_events_channel ON live_channel_events (channel_id, created_at DESC, id DESC);
CREATE INDEX live_channel_events_pending ON live_channel_events (channel_id, version) WHERE outcome = 'pending';

-- A user's activity started from a channel (a push-to-start carrying `input-push-channel`): the phone follows
-- the channel, so the channel's broadcasts update and end it; it has no update token and no per-device changes.
ALTER TABLE live_activities ADD COLUMN channel_id uuid;
CREATE INDEX live_activities_channel ON live_activities (channel_id) WHERE status = 'active' AND channel_id IS NOT NULL;
-- herald_activity_start takes the channel (functions/activity_start.sql); a database migrated from scratch has no
-- definition yet.
DROP FUNCTION IF EXISTS herald_activity_start(uuid, text, text, text, uuid, timestamptz, text, text, text, jsonb, jsonb,
                                              jsonb, timestamptz, bigint, text, text, bigint, text[], text[], text[],
                                              text, text, uuid, text, text, bigint, smallint, integer, integer,
                                              integer, integer, text, integer);
