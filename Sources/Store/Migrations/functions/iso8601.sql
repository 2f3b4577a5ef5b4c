-- The API's timestamp form (HeraldCore's ISO8601: milliseconds, UTC).
CREATE OR REPLACE FUNCTION herald_iso8601(p_time timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(p_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
