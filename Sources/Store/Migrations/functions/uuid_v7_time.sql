-- The millisecond a UUIDv7 was made in (its first 48 bits), as herald_uuid_v7 writes it: the
-- created_at of a Live Activity event, so an outbox row's event id alone names the event's partition.
CREATE OR REPLACE FUNCTION herald_uuid_v7_time(p_id uuid) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT timestamptz 'epoch'
           + ('x' || substr(replace(p_id::text, '-', ''), 1, 12))::bit(48)::bigint * interval '1 millisecond'
$$;
