-- Push-to-start tokens per template. ActivityKit gives an app one push-to-start token per
-- `ActivityAttributes` type (`Activity<T>.pushToStartTokenUpdates`), and a start sent with one type's
-- token cannot start another type. The host registers each template's token here; the device's single
-- `apns_push_to_start_token` stays, as the token of every template without its own.
CREATE TABLE device_push_to_start_tokens (
    user_id        text NOT NULL,
    device_id      text NOT NULL,
    -- LiveActivityTemplate's raw value (progress, status, countdown): the intake validates it.
    template       text NOT NULL,
    token          text NOT NULL,
    invalidated_at timestamptz,
    invalid_reason text,
    PRIMARY KEY (user_id, device_id, template),
    FOREIGN KEY (user_id, device_id) REFERENCES devices (user_id, device_id) ON DELETE CASCADE
);
-- A registration takes a token from whichever row held it (sql/007_edges.sql): one probe by value.
CREATE INDEX device_push_to_start_tokens_token ON device_push_to_start_tokens USING hash (token);

-- New signatures (functions/put_device.sql, backfill_users.sql, activity_audience.sql).
DROP FUNCTION IF EXISTS herald_put_device(text, text, text, text, text, text, text, text);
DROP FUNCTION IF EXISTS herald_backfill_users(integer[], text[], text[], integer[], integer[], text[], integer[],
    integer[], text[],
                                    integer[], integer[], text[], text[], text[], text[], text[], text[], text[]);
DROP FUNCTION IF EXISTS herald_activity_audience(text, text, text, text, timestamptz);
