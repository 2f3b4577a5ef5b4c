-- A partner may be suspended (nothing of it is sent, its rows stay queued with their attempts unspent, its key is
-- refused with 403) and resumed; a revoked partner's rows that were not sent are cancelled (outcome 'cancelled',
-- reason partner_revoked) and never replayed (functions/partner_revoke.sql, functions/claim_deliveries.sql).
ALTER TABLE partners ADD COLUMN suspended_at timestamptz;

ALTER TABLE delivery_history DROP CONSTRAINT delivery_history_outcome_check;
ALTER TABLE delivery_history ADD CONSTRAINT delivery_history_outcome_check
    CHECK (outcome IN ('sent', 'failed', 'dead', 'token_invalid', 'expired', 'suppressed', 'superseded', 'cancelled'));

-- The end a revocation sends each of the partner's active activities (dismissed at once) has its audit kind.
ALTER TABLE live_activity_events DROP CONSTRAINT live_activity_events_kind_check;
ALTER TABLE live_activity_events ADD CONSTRAINT live_activity_events_kind_check
    CHECK (kind IN ('start', 'update', 'end', 'expire', 'replace-end', 'revoke-end'));

-- A revocation finds the partner's active activities and reminders not sent without a scan (its open channels
-- through live_channels_mini_app).
CREATE INDEX live_activities_partner_active ON live_activities (partner_id) WHERE status = 'active';
CREATE INDEX reminders_partner_scheduled ON reminders (partner_id) WHERE status = 'scheduled';
