-- name: claim
-- parameters: limit Int, leaseSeconds Int, now Date
-- returns: LeasedChannel
-- Leases the broadcast channels a worker must make APNs agree with: $1 limit, $2 lease seconds, $3 now
-- (functions/channel_claim.sql).
SELECT id, status, apns_channel_id, environment, version, sent_version, apns_payload AS payload,
       apns_priority AS priority, expires_at, delete_at, attempts
  FROM herald_channel_claim($1, $2, $3);

-- name: record
-- What APNs answered for a leased channel: $1 channel, $2 outcome, $3 version, $4 reason, $5 retry time, $6 APNs
-- channel id, $7 environment, $8 now (functions/channel_record.sql).
SELECT herald_channel_record($1, $2, $3::integer, $4::text, $5::timestamptz, $6::text, $7::text, $8);

-- name: unmanaged
-- parameters: apnsChannelIDs [String]
-- returns: UnmanagedChannel
-- Of the APNs channel ids $1 (an app's list from APNs, up to Apple's 10,000), those no channel Herald still
-- manages carries (opening, open or ending): orphans whose create's answer was lost, or channels made behind
-- Herald's back. Once per channel sweep. EXCEPT, not NOT EXISTS: the list's size is unknown to the planner
-- (unnest estimates 10 rows), and an anti-join planned for 10 would scan the channels once per id; a set
-- difference reads each side once.
SELECT listed.id AS apns_channel_id FROM unnest($1::text[]) AS listed(id)
EXCEPT
SELECT c.apns_channel_id FROM live_channels c
 WHERE c.status IN ('opening', 'open', 'ending') AND c.apns_channel_id IS NOT NULL;
