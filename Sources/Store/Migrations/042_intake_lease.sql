-- The intake leases a push's due rows to the worker it notifies (functions/intake_push.sql, steps 5 and 6), and
-- the worker reads them instead of claiming them. The intake needs the worker's lease name and lease length,
-- which the listener's application_name cannot carry (63 bytes): each worker's listener session registers them
-- here, keyed by its server process, at connect (Sources/Store/DeliveryStore.swift, registerListenerSQL), and
-- removes rows of server processes that are gone.
CREATE TABLE worker_listeners (
    pid integer PRIMARY KEY,
    worker_id text NOT NULL,
    lease_seconds integer NOT NULL CHECK (lease_seconds > 0),
    registered_at timestamptz NOT NULL DEFAULT now()
);

-- herald_intake_push takes the lease (p_lease, p_lease_seconds): the definitions folder creates it again.
DROP FUNCTION IF EXISTS herald_intake_push(
    uuid[], integer[], integer[], text[], text[], timestamptz[], text[], text[], uuid[], timestamptz[], text[], text[],
    text[], text[], timestamptz[], integer[], timestamptz[], integer[], text[], text[], integer[], text[], text[],
    integer[], uuid[], text[], text[], text);
