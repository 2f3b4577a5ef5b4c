-- Queues one broadcast channel event (sql/034_live_channels.sql) for each channel of `p_ids`, locked by the caller:
-- the change becomes the channel's newest, the one a worker broadcasts (a change not broadcast yet is replaced, not
-- queued: its audit row then ends 'superseded'), with its audit row of kind `p_kind` at the channel's new version.
-- Every path that changes what a channel broadcasts writes it here:
--   'open'    the channel row the open just inserted (version 1): its first work is the create, due now;
--   'update'  the partner's update: `p_apns` at `p_priority`, the new `p_state`, end rendering `p_end_apns`, TTL
--             `p_expires`, `p_relevance` and alerted budget `p_alerted`, broadcast now;
--   'end'     the partner's end: `p_apns` at `p_priority` with the final `p_state`, broadcast now; the channel is
--             'ending' and APNs deletes it at `p_delete_at`;
--   'expire'  the TTL, for those of `p_ids` still opening or open past it (functions/channel_claim.sql): the stored
--             end at priority 5, stamped no earlier than the TTL; the channel is 'ending' and deleted at its TTL.
-- An ending channel APNs never made broadcasts nothing (the worker deletes whatever channel a create in flight
-- makes): its audit row is 'not_sent' at once. The audit row records the channel's state, an update's the
-- partner's patch (`p_patch`); `p_key`, `p_alert_title`, `p_ttl_seconds` and `p_dismiss` as the partner gave them.
CREATE OR REPLACE FUNCTION herald_channel_event(
    p_ids uuid[], p_kind text, p_now timestamptz, p_state jsonb DEFAULT NULL, p_timestamp bigint DEFAULT NULL,
    p_apns text DEFAULT NULL, p_priority smallint DEFAULT NULL, p_end_apns text DEFAULT NULL,
    p_expires timestamptz DEFAULT NULL, p_relevance smallint DEFAULT NULL, p_alerted timestamptz[] DEFAULT NULL,
    p_delete_at timestamptz DEFAULT NULL, p_patch jsonb DEFAULT NULL, p_key text DEFAULT NULL,
    p_alert_title text DEFAULT NULL, p_ttl_seconds integer DEFAULT NULL, p_dismiss timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_events uuid[];
    v_ids    uuid[];
BEGIN
    -- The event ids in plpgsql: a sql function (herald_uuid_v7) is planned again at every run of a statement that
    -- calls it, and once a transaction in a plpgsql expression.
    FOR i IN 1..cardinality(p_ids) LOOP
        v_events[i] := herald_uuid_v7();
    END LOOP;
    v_ids := p_ids;
    IF p_kind = 'expire' THEN
        SELECT coalesce(array_agg(c.id), '{}') INTO v_ids FROM live_channels c
         WHERE c.id = ANY (p_ids) AND c.status IN ('opening', 'open') AND c.expires_at <= p_now;
    END IF;
    -- Plain statements, the audit row read back by the primary key: an UPDATE ... RETURNING in a WITH costs a
    -- single change a fifth more.
    IF p_kind <> 'open' THEN
        UPDATE live_channels c
           SET version = c.version + 1, updated_at = p_now,
               state = CASE WHEN p_kind = 'expire' THEN c.state ELSE p_state END,
               apns_payload = CASE WHEN p_kind = 'expire' THEN c.apns_end_payload ELSE p_apns END,
               apns_priority = CASE WHEN p_kind = 'expire' THEN 5 ELSE p_priority END,
               last_timestamp = CASE WHEN p_kind = 'expire'
                                     THEN greatest(c.last_timestamp + 1, extract(epoch FROM c.expires_at)::bigint)
                                     ELSE p_timestamp END,
               -- An expiring channel is the caller's claim already.
               next_at = CASE WHEN p_kind = 'expire' THEN c.next_at ELSE p_now END,
               apns_end_payload = CASE WHEN p_kind = 'update' THEN p_end_apns ELSE c.apns_end_payload END,
               expires_at = CASE WHEN p_kind = 'update' THEN p_expires ELSE c.expires_at END,
               relevance_score = CASE WHEN p_kind = 'update' THEN p_relevance ELSE c.relevance_score END,
               alerted_at = CASE WHEN p_kind = 'update' THEN p_alerted ELSE c.alerted_at END,
               status = CASE WHEN p_kind = 'update' THEN c.status ELSE 'ending' END,
               ended_at = CASE p_kind WHEN 'end' THEN p_now WHEN 'expire' THEN c.expires_at ELSE c.ended_at END,
               delete_at = CASE p_kind WHEN 'end' THEN p_delete_at WHEN 'expire' THEN c.expires_at
                                ELSE c.delete_at END,
               -- Before APNs made the channel no phone can follow it: an end has no one to tell.
               sent_version = CASE WHEN p_kind <> 'update' AND c.apns_channel_id IS NULL THEN c.version + 1
                                   ELSE c.sent_version END
         WHERE c.id = ANY (v_ids);
    END IF;
    INSERT INTO live_channel_events (id, created_at, channel_id, partner_id, kind, state, alert_title, ttl_seconds,
                                     dismiss_at, idempotency_key, version, outcome, finished_at)
    SELECT e.id, herald_uuid_v7_time(e.id), c.id, c.partner_id, p_kind,
           CASE WHEN p_kind = 'update' THEN p_patch ELSE c.state END, p_alert_title, p_ttl_seconds, p_dismiss, p_key,
           c.version, CASE WHEN c.status = 'ending' AND c.apns_channel_id IS NULL THEN 'not_sent' ELSE 'pending' END,
           CASE WHEN c.status = 'ending' AND c.apns_channel_id IS NULL THEN p_now END
      FROM unnest(v_ids, v_events) AS e (channel_id, id)
      JOIN live_channels c ON c.id = e.channel_id;
END
$$;
