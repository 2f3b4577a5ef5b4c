-- Operations: what `heraldctl replay` and `heraldctl stats` read and write.
--
-- Replay sends a failed delivery again with the bytes it had (rendered and signed at intake; the worker
-- has no signing key), under its own id, so the app sees the same notification and the history keeps
-- one story per id. History keeps those bytes only for rows a replay may pick: failed, dead and
-- expired pushes (never sent rows, nor Live Activity rows, whose state a newer update replaced).
ALTER TABLE delivery_history
    -- The request's partition key, so a replay finds (and counts again on) its audit row by primary key.
    ADD COLUMN request_created_at timestamptz,
    ADD COLUMN payload text,
    -- Set when a replay queued this row again: a second replay skips it (already_replayed).
    ADD COLUMN replayed_at timestamptz;

-- Replay selects by partner and finish time, or by finish time alone (and by request, with
-- delivery_history_request). Partial: only replayable rows pay for these entries, not the sent ones that
-- every completion writes.
CREATE INDEX delivery_history_replayable_partner ON delivery_history (partner_id, finished_at)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;
CREATE INDEX delivery_history_replayable ON delivery_history (finished_at)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;
-- `heraldctl stats` counts the last hour's outcomes. History is written in finish order, so a BRIN
-- index (a few pages per partition) narrows the scan to the recent block ranges at almost no write cost.
CREATE INDEX delivery_history_finished ON delivery_history USING brin (finished_at) WITH (pages_per_range = 32);
