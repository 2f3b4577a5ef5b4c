-- Tokens that stay true. A device token's invalidation keeps its reason and the time the token
-- stopped being valid (APNs' 410 timestamp, else the verdict's), so the host can read each token's
-- health (GET .../devices) and an operator can count invalidations by reason (heraldctl tokens).
-- A registration is recorded (registered_at): a host PUT after an invalidation makes the token usable
-- again (the app is back on the phone), and a verdict about a token registered after it invalidates
-- nothing.
ALTER TABLE devices
    ADD COLUMN apns_token_invalid_reason          text,
    ADD COLUMN apns_push_to_start_invalid_reason  text,
    ADD COLUMN fcm_token_invalid_reason           text,
    -- The host's last PUT of the device (every token it carries). NULL for rows registered before this
    -- column existed: a verdict about them applies.
    ADD COLUMN registered_at                      timestamptz;

-- `heraldctl tokens` counts a window's invalidations; they are few among the history's rows.
CREATE INDEX delivery_history_token_invalid ON delivery_history (finished_at) WHERE outcome = 'token_invalid';
