-- Records the attempts' outcomes: 'delivered', 'failed', or 'retry' at its `p_retry_at`. Only events
-- still leased by `p_worker` change (one rescued meanwhile belongs to its new sender).
CREATE OR REPLACE FUNCTION herald_webhook_record(p_worker text, p_ids uuid[], p_outcomes text[], p_statuses integer[],
                                      p_errors text[], p_retry_at timestamptz[], p_now timestamptz)
RETURNS integer
LANGUAGE sql VOLATILE AS $$
    WITH done AS (
        UPDATE webhook_events e
           SET state = CASE o.outcome WHEN 'retry' THEN 'pending' ELSE o.outcome END,
               available_at = CASE o.outcome WHEN 'retry' THEN o.retry_at ELSE e.available_at END,
               finished_at = CASE o.outcome WHEN 'retry' THEN NULL ELSE p_now END,
               last_status = o.status, last_error = o.error, leased_by = NULL, lease_expires_at = NULL
          FROM unnest(p_ids, p_outcomes, p_statuses, p_errors, p_retry_at) AS o (id, outcome, status, error, retry_at)
         WHERE e.id = o.id AND e.state = 'sending' AND e.leased_by = p_worker
        RETURNING 1)
    SELECT count(*)::integer FROM done
$$;
