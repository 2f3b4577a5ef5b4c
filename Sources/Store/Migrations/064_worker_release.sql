-- The release each worker runs (HeraldVersion.current, what its `--version` prints), beside the free-text
-- `version` an operator sets (HERALD_VERSION: an image tag or commit), so a rolling upgrade shows which workers
-- are replaced. Expand-only: NULL for the rows of a release before this column, whose heartbeat does not name
-- it and keeps running against this schema (docs/architecture.md, *Schema changes across releases*).
ALTER TABLE worker_heartbeats ADD COLUMN release text;
