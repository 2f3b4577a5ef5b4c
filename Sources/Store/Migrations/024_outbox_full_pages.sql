-- The outbox's pages filled whole.
--
-- sql/004_outbox.sql left 30% of every page free so that a claim's UPDATE could put the row's new version
-- on its own page. A claim leases a batch of adjacent rows at once, so at most a few of a page's rows found
-- room there anyway, and the reserve cost the backlog its memory: 30M rows filled 833 bytes of heap a row
-- (25 GB, more than this 24 GB machine caches), and the backlog's drain read its pages back from disk at
-- 7,000-9,000 rows/s. Filled whole, the same rows take 435 bytes (13 GB); the drains of single rows and of
-- groups cost Postgres the same per delivery. Only pages written from now on are filled whole.
ALTER TABLE deliveries SET (fillfactor = 100);
