-- The staging tables of one batch of a sends backfill, loaded with COPY by BackfillStore.enqueue
-- and emptied at each commit. Temporary: private to the session, never WAL-logged. Created once
-- per session (IF NOT EXISTS; its notice silenced), so the plans of herald_backfill_apply, cached
-- per session, stay valid from batch to batch.
CREATE OR REPLACE FUNCTION herald_backfill_stage()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET client_min_messages = warning
AS $$
BEGIN
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_lines (
        line        integer NOT NULL,
        partner_id  uuid NOT NULL,
        key         text NOT NULL,
        request_id  uuid NOT NULL,
        created_at  timestamptz NOT NULL,
        mini_app_id text NOT NULL,
        title       text NOT NULL,
        body        text NOT NULL,
        deep_link   text,
        data        jsonb NOT NULL,
        send_at     timestamptz,
        ttl_seconds integer NOT NULL,
        recipients  integer NOT NULL,
        suppressed  integer NOT NULL,
        missing     jsonb NOT NULL,
        deliveries  integer NOT NULL,
        collapse_key text
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_deliveries (
        request_id  uuid NOT NULL,
        id          uuid NOT NULL,
        service     text NOT NULL,
        user_id     text NOT NULL,
        device_id   text NOT NULL,
        environment text NOT NULL,
        payload     text NOT NULL
    ) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS herald_backfill_senders (
        request_id uuid NOT NULL,
        user_id    text NOT NULL
    ) ON COMMIT DELETE ROWS;
END
$$;
