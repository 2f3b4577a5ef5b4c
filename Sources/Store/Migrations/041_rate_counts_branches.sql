-- herald_rate_counts becomes a plpgsql function returning one row (OUT parameters) instead of an inlined set-returning
-- SQL function: the definitions folder creates it again (functions/rate_counts.sql), so the old signature goes.
DROP FUNCTION IF EXISTS herald_rate_counts(uuid, bigint);
