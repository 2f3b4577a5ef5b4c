-- Each partner's two rate windows as running sums, so a request reads a row instead of summing a
-- day of minute buckets (1,440 rows for a partner that sends all day). `minute_count` is the sum of
-- the partner's 's' buckets after `minute_edge` (a second), `day_count` of its 'm' buckets after
-- `day_edge` (a minute), as the last writer under the partner's advisory lock left them; a reader
-- moves an edge forward by subtracting the buckets it passes (functions/rate_counts.sql). Every
-- writer of a bucket writes the row in the same transaction, so the two never disagree. No row yet
-- means the sums are read from the buckets.
CREATE TABLE rate_windows (
    partner_id   uuid PRIMARY KEY,
    minute_edge  bigint NOT NULL,
    minute_count integer NOT NULL,
    day_edge     bigint NOT NULL,
    day_count    integer NOT NULL
);
