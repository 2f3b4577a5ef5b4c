-- Setup for bench/queue-ceiling.sql (bench/compare's minimal queue ceiling): a bare queue table,
-- one index for "what is due", and :rows due rows whose payload has the size and shape of the
-- APNs body Herald's intake renders for a push (an alert plus a signed envelope, ~300 bytes).
SET client_min_messages TO warning;
DROP TABLE IF EXISTS queue_ceiling;
CREATE TABLE queue_ceiling (
    id           bigserial PRIMARY KEY,
    state        smallint NOT NULL,   -- 0 due, 2 done
    available_at timestamptz NOT NULL,
    locked_by    int,
    locked_at    timestamptz,
    attempts     int NOT NULL,
    payload      jsonb NOT NULL
);
CREATE INDEX queue_ceiling_due ON queue_ceiling (state, available_at);
INSERT INTO queue_ceiling (state, available_at, attempts, payload)
SELECT 0, now() - interval '1 minute', 0,
       ('{"aps":{"alert":{"title":"[Pull] Deposit pending","body":"Confirmations: 1/6"},"mutable-content":1},'
        '"channel":"mini-app","miniAppId":"fun.pull.gacha","deliveryId":"' || gen_random_uuid() || '",'
        '"senderName":"Pull","isGroup":true,"kid":"k1","sig":"'
        || rtrim(translate(encode(sha256(g::text::bytea), 'base64'), '+/', '-_'), '=') || '"}')::jsonb
  FROM generate_series(1, :rows) g;
VACUUM ANALYZE queue_ceiling;
