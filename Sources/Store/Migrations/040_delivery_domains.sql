-- The outbox's enumerated columns (state, service, environment, activity_event) are checked by domains, not by
-- table CHECK constraints. Postgres reads a table's CHECK expressions back from the catalog and plans them again
-- for every INSERT or UPDATE statement, where a domain's are cached once per session: with one row a statement,
-- as the intake's write and the worker's claim have, the four CHECKs were a fifth of the claim's cost
-- (bench/statements counts it). members_shape spans columns and stays a table CHECK.
--
-- No row is rewritten: a column moves to a domain that has no constraint yet (a binary-coercible change), then
-- the domain gets the old CHECK's condition. The partial indexes whose predicate reads `state` are rebuilt
-- while deliveries is locked; the outbox holds only pending and leased work, so that is a short pause of the
-- intake and the workers even with a large backlog (about two seconds for a million rows).
CREATE DOMAIN delivery_state AS text;
CREATE DOMAIN delivery_service AS text;
CREATE DOMAIN delivery_environment AS text;
CREATE DOMAIN delivery_activity_event AS text;

ALTER TABLE deliveries
    ALTER COLUMN state TYPE delivery_state,
    ALTER COLUMN service TYPE delivery_service,
    ALTER COLUMN environment TYPE delivery_environment,
    ALTER COLUMN activity_event TYPE delivery_activity_event;

ALTER DOMAIN delivery_state ADD CONSTRAINT delivery_state_known CHECK (VALUE IN ('pending', 'leased')) NOT VALID;
ALTER DOMAIN delivery_service ADD CONSTRAINT delivery_service_known CHECK (VALUE IN ('apns', 'fcm')) NOT VALID;
ALTER DOMAIN delivery_environment ADD CONSTRAINT delivery_environment_known
    CHECK (VALUE IN ('production', 'sandbox')) NOT VALID;
ALTER DOMAIN delivery_activity_event ADD CONSTRAINT delivery_activity_event_known
    CHECK (VALUE IN ('start', 'update', 'end')) NOT VALID;

ALTER TABLE deliveries
    DROP CONSTRAINT deliveries_state_check,
    DROP CONSTRAINT deliveries_service_check,
    DROP CONSTRAINT deliveries_environment,
    DROP CONSTRAINT deliveries_activity_event_check;

-- The table's CHECKs held for every row until this transaction; validating says so in the catalog (a scan of
-- the outbox, under the lock already held).
ALTER DOMAIN delivery_state VALIDATE CONSTRAINT delivery_state_known;
ALTER DOMAIN delivery_service VALIDATE CONSTRAINT delivery_service_known;
ALTER DOMAIN delivery_environment VALIDATE CONSTRAINT delivery_environment_known;
ALTER DOMAIN delivery_activity_event VALIDATE CONSTRAINT delivery_activity_event_known;
