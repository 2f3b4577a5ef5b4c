-- The idempotency lookup is the first query of every keyed push. Keep its statistics close to
-- the table's real size (which swings as the janitor deletes expired keys), so its plan stays an
-- index probe rather than a scan planned from an "empty table" estimate.
ALTER TABLE idempotency_keys SET (
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_analyze_threshold = 200
);
