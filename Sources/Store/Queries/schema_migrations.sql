-- The migrator's bookkeeping (Migrator): which migrations and definitions are applied, under one advisory lock.

-- name: bootstrap
-- The bookkeeping tables, created before the first migration runs (DDL, which cannot be prepared).
-- unprepared
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS schema_functions (
    name       text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());

-- name: lock
-- parameters: key Int
-- The migrator's transaction-scoped advisory lock: $1 its key. Concurrent migrators run one after the other.
SELECT pg_advisory_xact_lock($1) AS locked;

-- name: highestVersion
-- returns: Migrator.Highest
-- The highest migration version recorded (0 for none).
SELECT coalesce(max(version), 0) AS highest FROM schema_migrations;

-- name: migrationChecksum
-- parameters: version Int
-- returns: Migrator.Recorded
-- The checksum recorded for migration version $1 (no row: not applied).
SELECT checksum FROM schema_migrations WHERE version = $1;

-- name: recordMigration
-- parameters: version Int, name String, checksum String
-- Records migration $1 version, $2 name, $3 checksum as applied.
INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3);

-- name: forgetDefinitions
-- returns: NoRow
-- Forgets every applied definition, so each runs again.
DELETE FROM schema_functions;

-- name: definitionChecksum
-- parameters: name String
-- returns: Migrator.Recorded
-- The checksum recorded for definition $1 (no row: not applied).
SELECT checksum FROM schema_functions WHERE name = $1;

-- name: recordDefinition
-- parameters: name String, checksum String
-- Records definition $1 with checksum $2 as applied (now).
INSERT INTO schema_functions (name, checksum) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now();
