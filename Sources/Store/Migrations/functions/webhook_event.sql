-- One event for the partner of `p_partner`, if it has a webhook. Members given NULL are left out (json_strip_nulls):
-- `superseded` and `cancelled` only for a push, `retracted` only for push.retracted, whose time is `retractedAt`
-- (p_at_key) where the others have `completedAt`.
CREATE OR REPLACE FUNCTION herald_webhook_event(p_partner uuid, p_type text, p_subject uuid, p_subject_key text,
                                     p_sent integer, p_failed integer, p_suppressed integer,
                                     p_superseded integer DEFAULT NULL, p_cancelled integer DEFAULT NULL,
                                     p_retracted integer DEFAULT NULL, p_at_key text DEFAULT 'completedAt')
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_id  uuid := gen_random_uuid();
    v_now timestamptz := clock_timestamp();
BEGIN
    INSERT INTO webhook_events (id, partner_id, type, subject_id, body, created_at, window_start, available_at)
    SELECT v_id, p.id, p_type, p_subject,
           json_strip_nulls(json_build_object('type', p_type, 'id', v_id, p_subject_key, p_subject, 'sent', p_sent,
                                              'failed', p_failed, 'suppressed', p_suppressed,
                                              'superseded', p_superseded, 'cancelled', p_cancelled,
                                              'retracted', p_retracted, p_at_key, herald_iso8601(v_now)))::text,
           v_now, v_now, v_now
      FROM partners p
     WHERE p.id = p_partner AND p.webhook_url IS NOT NULL;
END
$$;
