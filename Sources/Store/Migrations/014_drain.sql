-- What each delivery costs Postgres in a drain.
--
-- The claim found its rows three times: by the due index (to lock them), then by id through deliveries_pkey
-- twice (to mark them leased, then to return them with their devices). It now carries the locked row
-- versions (ctid) from one step to the next: a TID scan reads the page where a primary-key probe descends
-- the whole index, per row and per step.
--
-- History: a sent row (nearly all of them) wrote three index entries that nothing reads: the primary key
-- (id, finished_at), which no statement looks up and whose uniqueness the completion already gives (a
-- delivery leaves the outbox once per send), and delivery_history_request, which only replay reads, and only
-- for replayable rows. The key goes; the request index keeps only what replay may pick, like the other two
-- replay indexes of sql/010_operations.sql.
ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_pkey;
DROP INDEX delivery_history_request;
CREATE INDEX delivery_history_request ON delivery_history (request_id)
    WHERE outcome IN ('failed', 'dead', 'expired') AND activity_event IS NULL;
