-- One event for the partner of `p_partner`, if it has a webhook. `superseded` only for a push (p_superseded), the
-- one null member json_strip_nulls leaves out.
CREATE OR REPLACE FUNCTION herald_webhook_event(p_partner uuid, p_type text, p_subject uuid, p_subject_key text,
                                     p_sent integer, p_failed integer, p_suppressed integer,
                                     p_superseded integer DEFAULT NULL)
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
                                              'superseded', p_superseded, 'completedAt', herald_iso8601(v_now)))::text,
           v_now, v_now, v_now
      FROM partners p
     WHERE p.id = p_partner AND p.webhook_url IS NOT NULL;
END
$$;
