-- Two costs of sql/016_delivery_groups.sql in a drain of single rows:
--
-- 1. The due index carried `member_count` as an INCLUDE column, and a B-tree with INCLUDE columns is never
--    deduplicated: a queue's entries of one (lane, partner, available_at) key (a request's rows share one)
--    were stored one by one, so a claim's walk over a drained queue's dead head read several times the
--    pages (the claim's locking scan 0.9 ms -> 3.1 ms per 200 rows). `member_count` is now the index's last
--    key column: entries equal in all four are deduplicated, the claim's order (available_at within a
--    lane and partner) is the index's, and the queue gauge still counts deliveries from the index alone.
--    (A second, partial index of group rows for the gauge cost single-row inserts 5-9% in pgbench.)
-- 2. The claim first probed each partner's queue head, walking the same entries as the rounds' scan after
--    it, and, as a scalar subquery also tested in its WHERE clause, twice per partner (4.1 ms of a 15.4 ms
--    claim). The claim goes straight to its rounds: a partner without due rows costs the first round one
--    index probe and leaves the rounds.
CREATE INDEX deliveries_due_partner_dedup ON deliveries (lane, partner_id, available_at, member_count)
    WHERE state = 'pending';
DROP INDEX deliveries_due_partner;
ALTER INDEX deliveries_due_partner_dedup RENAME TO deliveries_due_partner;
