-- A time-ordered (UUIDv7) id, as HeraldCore's UUIDv7 makes in Swift: deliveries made in SQL (the Live
-- Activity fan-out) get ids in time order too, so inserts append at the right edge of deliveries_pkey
-- and a claim's rows share a few index leaves.
CREATE OR REPLACE FUNCTION herald_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$
    -- 48 bits of UNIX milliseconds, then a version-4 UUID's random bits with the version nibble set to 7
    -- (its variant bits are already 0b10), the layout of Sources/HeraldCore/UUIDv7.swift.
    SELECT encode(set_byte(overlay(r.b PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                                                        FROM 3) FROM 1 FOR 6),
                           6, (get_byte(r.b, 6) & 15) | 112), 'hex')::uuid
      FROM (SELECT uuid_send(gen_random_uuid()) AS b) r
$$;
