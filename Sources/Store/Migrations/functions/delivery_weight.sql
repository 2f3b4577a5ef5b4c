-- How many deliveries a row still stands for: 1 for a single row, the members not yet done for a group.
CREATE OR REPLACE FUNCTION herald_delivery_weight(p_member_count integer, p_done integer[]) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_member_count - coalesce(cardinality(p_done), 0) $$;
