-- The statements of the host's delivery events (DeliveryEventStore).

-- name: record
-- parameters: deliveryID UUID, event String, at Date, userID String?, now Date, windowDays Int, webhookDelay Int
-- returns: DeliveryEventStore.Recorded
-- One report of push delivery $1 (Migrations/functions/delivery_event.sql): event $2 at $3, of user $4 (NULL: any
-- user), judged at $5; events count for $6 days after the push's acceptance; push.opened coalesced for $7 seconds.
SELECT result, at FROM herald_delivery_event($1, $2, $3, $4, $5, $6, $7);

