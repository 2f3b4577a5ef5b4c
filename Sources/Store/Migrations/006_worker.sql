-- The worker's queue functions: fair claim, queue heads, and the index they share.

-- Claims read due rows per (lane, partner), oldest first. The (lane, available_at) index of 004 is
-- replaced: with partner_id in the middle one index serves the fair claim (a range per partner)
-- and the head of each partner's queue (its first entry) for the oldest-due metric and the next
-- wake-up.
CREATE INDEX deliveries_due_partner ON deliveries (lane, partner_id, available_at) WHERE state = 'pending';
DROP INDEX deliveries_due;
