-- Operator backfills (heraldctl backfill sends|users): the line keys that make a rerun
-- create nothing twice, a set-based recipient resolver for a whole batch of lines, the batch
-- enqueue from COPY-loaded staging tables, and the host API's user upsert as one function both the
-- API and the users backfill call.

-- One row per accepted line of a sends file, kept permanently: the same (partner, key) is never
-- enqueued twice, however often a file is rerun or run twice at once. `run_id` tells a key used
-- earlier in the same run (a duplicate line of the file: rejected) from one of an earlier run (a
-- rerun: counted as a duplicate).
CREATE TABLE backfill_keys (
    partner_id uuid NOT NULL,
    key        text NOT NULL,
    request_id uuid NOT NULL,
    run_id     uuid NOT NULL,
    line       integer NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (partner_id, key)
);
