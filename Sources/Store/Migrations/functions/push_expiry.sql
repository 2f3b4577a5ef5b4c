-- When a push's deliveries expire: its TTL counted from when they are due (a push's sendAt, else its acceptance; a
-- reminder's time; a replay's start). The one place it is computed: the outbox writer (functions/outbox_write.sql)
-- for the deliveries and each writer of an audit row (push_requests.expires_at) take it from here. STABLE, not
-- IMMUTABLE, as timestamptz + interval is: so Postgres inlines it into the caller's expression.
CREATE OR REPLACE FUNCTION herald_push_expiry(p_due timestamptz, p_ttl integer) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT p_due + make_interval(secs => p_ttl)
$$;
