-- Cancels a user's reminder: its deliveries leave the outbox (nothing is sent) and its audit row
-- counts none, so the request reads as completed with nothing sent (an UPDATE of `deliveries` fires no
-- push.completed webhook, sql/020_webhooks.sql). Safe against a worker's claim: the deliveries are
-- locked before they are checked, a claim skips locked rows (SKIP LOCKED), and a row a claim took
-- first is seen leased once that claim commits, so a reminder is either cancelled whole or found sent.
--
-- Outcomes: 'cancelled' (also when it already was: cancelling is idempotent), 'sent', 'not_found'
-- (no such reminder of this user).
CREATE OR REPLACE FUNCTION herald_cancel_reminder(p_reminder uuid, p_user text)
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_reminder reminders%ROWTYPE;
    v_locked   integer;
BEGIN
    SELECT * INTO v_reminder FROM reminders r WHERE r.id = p_reminder AND r.user_id = p_user FOR UPDATE;
    IF NOT FOUND THEN
        RETURN 'not_found';
    END IF;
    IF v_reminder.status <> 'scheduled' THEN
        RETURN v_reminder.status;
    END IF;
    SELECT count(*) INTO v_locked FROM (
        SELECT 1 FROM deliveries d
         WHERE d.id = ANY (v_reminder.deliveries) AND d.state = 'pending' AND d.attempts = 0
           FOR UPDATE) AS x;
    IF v_locked < cardinality(v_reminder.deliveries) THEN
        UPDATE reminders SET status = 'sent', finished_at = now() WHERE id = p_reminder;
        RETURN 'sent';
    END IF;
    DELETE FROM deliveries d WHERE d.id = ANY (v_reminder.deliveries);
    UPDATE push_requests p SET deliveries = p.deliveries - v_locked
     WHERE p.id = v_reminder.request_id AND p.created_at = v_reminder.request_created_at;
    UPDATE reminders SET status = 'cancelled', finished_at = now() WHERE id = p_reminder;
    RETURN 'cancelled';
END
$$;
