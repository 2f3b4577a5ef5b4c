-- What came of a worker's call to APNs for a leased broadcast channel (functions/channel_claim.sql), and the
-- lease given back. `p_outcome`:
--   'created'   the APNs channel exists (`p_apns_channel_id` in `p_environment`); the open's audit row is sent;
--   'broadcast' version `p_version` was broadcast: its audit rows are sent, older pending ones superseded;
--   'refused'   APNs refused version `p_version` for good (`p_reason`): its audit rows failed, the channel
--               goes on with the next change;
--   'deleted'   the APNs channel is deleted (or APNs no longer knows it): the channel is 'ended';
--   'closed'    an ending channel APNs never made: 'ended' with nothing to delete;
--   'gone'      APNs refused the channel itself for good (`p_reason`: cannot create, ChannelNotRegistered): the
--               channel is 'failed' and its pending audit rows failed;
--   'retry'     try again at `p_retry_at` (`p_reason`: a 5xx, 429, timeout, connection or setup problem);
--   'release'   nothing was due after all (another worker sent the change): the lease is given back.
-- Afterwards `next_at` is the row's next work: now while a newer change waits, the deletion time of an ending
-- channel, else the TTL. The attempt count restarts after every success.
CREATE OR REPLACE FUNCTION herald_channel_record(p_id uuid, p_outcome text, p_version integer, p_reason text,
                                                 p_retry_at timestamptz, p_apns_channel_id text,
                                                 p_environment text, p_now timestamptz)
RETURNS void
LANGUAGE plpgsql VOLATILE
AS $$
BEGIN
    IF p_outcome = 'retry' THEN
        UPDATE live_channels SET leased_until = NULL, next_at = p_retry_at, failure = p_reason WHERE id = p_id;
        RETURN;
    END IF;
    IF p_outcome IN ('deleted', 'closed', 'gone') THEN
        UPDATE live_channels
           SET status = CASE WHEN p_outcome = 'gone' THEN 'failed' ELSE 'ended' END, leased_until = NULL,
               updated_at = p_now, failure = p_reason, attempts = 0
         WHERE id = p_id;
        UPDATE live_channel_events
           SET outcome = CASE WHEN p_outcome = 'gone' THEN 'failed' ELSE 'not_sent' END, reason = p_reason,
               finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending';
        RETURN;
    END IF;
    IF p_outcome = 'created' THEN
        UPDATE live_channels
           SET apns_channel_id = p_apns_channel_id, environment = p_environment,
               status = CASE WHEN status = 'opening' THEN 'open' ELSE status END
         WHERE id = p_id;
        UPDATE live_channel_events SET outcome = 'sent', finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending' AND version = 1;
    ELSIF p_outcome IN ('broadcast', 'refused') THEN
        UPDATE live_channels
           SET sent_version = greatest(sent_version, p_version),
               broadcasts = broadcasts + CASE WHEN p_outcome = 'broadcast' THEN 1 ELSE 0 END,
               failure = CASE WHEN p_outcome = 'refused' THEN p_reason END
         WHERE id = p_id;
        UPDATE live_channel_events
           SET outcome = CASE WHEN version < p_version THEN 'superseded'
                              WHEN p_outcome = 'broadcast' THEN 'sent' ELSE 'failed' END,
               reason = CASE WHEN version = p_version AND p_outcome = 'refused' THEN p_reason END,
               finished_at = p_now
         WHERE channel_id = p_id AND outcome = 'pending' AND version <= p_version;
    END IF;
    UPDATE live_channels
       SET leased_until = NULL, attempts = 0,
           next_at = CASE WHEN version > sent_version OR (status = 'ending' AND apns_channel_id IS NOT NULL
                                                          AND delete_at IS NULL) THEN p_now
                          WHEN status = 'ending' THEN greatest(p_now, delete_at)
                          ELSE expires_at END
     WHERE id = p_id;
END
$$;
