-- fragment: partnerColumns
-- The columns a PartnerRecord is read from; the overlaps' ends only while they last.
id, mini_app_id, display_name, tenant_id, rate_limit_per_minute, rate_limit_per_day, icon_url,
created_at, revoked_at, icon_updated_at, webhook_url, sound, allow_time_sensitive,
CASE WHEN previous_key_expires_at > now() AND revoked_at IS NULL THEN previous_key_expires_at END
    AS previous_key_expires_at,
suspended_at,
CASE WHEN previous_webhook_secret_expires_at > now() AND revoked_at IS NULL
     THEN previous_webhook_secret_expires_at END AS previous_webhook_secret_expires_at

-- name: createTenant
-- parameters: tenantID String
-- The partner's tenant ($1), if it is new.
INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING;

-- name: create
-- A new partner: $1 id, $2 mini-app, $3 display name, $4 tenant, $5 key hash, $6-$7 rate limits, $8 icon source
-- URL, $9 whether icon images are stored, $10 webhook URL, $11 webhook secret, $12 sound, $13 time-sensitive
-- permission.
INSERT INTO partners (id, mini_app_id, display_name, tenant_id, key_hash, rate_limit_per_minute,
                      rate_limit_per_day, icon_url, icon_updated_at, webhook_url, webhook_secret,
                      sound, allow_time_sensitive)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $9 THEN now() END, $10, $11, $12, $13)
RETURNING {{partnerColumns}};

-- name: list
-- returns: PartnerRecord
-- Every partner, revoked ones too, oldest first.
SELECT {{partnerColumns}} FROM partners ORDER BY created_at, id;

-- name: find
-- parameters: id UUID
-- returns: PartnerRecord
-- A partner by id ($1).
SELECT {{partnerColumns}} FROM partners WHERE id = $1;

-- name: findActive
-- parameters: keyHash String
-- returns: PartnerStore.KeyMatch
-- The active partner owning a key hash ($1): its current key, or its previous one while the overlap lasts
-- (`previous`). Two unique-index lookups: a query ORing the two columns would need a bitmap of both.
SELECT {{partnerColumns}}, false AS previous FROM partners WHERE key_hash = $1 AND revoked_at IS NULL
UNION ALL
SELECT {{partnerColumns}}, true FROM partners
 WHERE previous_key_hash = $1 AND previous_key_expires_at > now() AND revoked_at IS NULL
LIMIT 1;

-- name: findActiveByMiniApp
-- parameters: miniAppID String
-- returns: PartnerRecord
-- The active partner of a mini-app ($1), by partners_active_mini_app.
SELECT {{partnerColumns}} FROM partners WHERE mini_app_id = $1 AND revoked_at IS NULL;

-- name: findByMiniApp
-- parameters: miniAppID String
-- returns: PartnerRecord
-- Every partner that had a mini-app id ($1), the active one first.
SELECT {{partnerColumns}} FROM partners WHERE mini_app_id = $1 ORDER BY revoked_at NULLS FIRST;

-- name: update
-- Applies the changes given ($1 id): $2 display name, $3-$4 rate limits (NULL: kept); $5 whether the icon
-- changes, to source URL $6, with images stored $7; $8 whether the webhook changes, to URL $9 (NULL: removed) and
-- secret $10 (NULL: kept); $11 whether the sound changes, to $12; $13 time-sensitive permission (NULL: kept);
-- $14 whether the previous webhook secret's overlap ends.
UPDATE partners SET
    display_name = coalesce($2, display_name),
    rate_limit_per_minute = coalesce($3, rate_limit_per_minute),
    rate_limit_per_day = coalesce($4, rate_limit_per_day),
    icon_url = CASE WHEN $5 THEN $6 ELSE icon_url END,
    icon_updated_at = CASE WHEN $5 THEN CASE WHEN $7 THEN now() END ELSE icon_updated_at END,
    webhook_url = CASE WHEN $8 THEN $9 ELSE webhook_url END,
    webhook_secret = CASE WHEN $8 AND $9::text IS NULL THEN NULL ELSE coalesce($10, webhook_secret) END,
    previous_webhook_secret = CASE WHEN $14 THEN NULL ELSE previous_webhook_secret END,
    previous_webhook_secret_expires_at = CASE WHEN $14 THEN NULL
                                              ELSE previous_webhook_secret_expires_at END,
    sound = CASE WHEN $11 THEN $12 ELSE sound END,
    allow_time_sensitive = coalesce($13, allow_time_sensitive),
    updated_at = now()
WHERE id = $1
RETURNING {{partnerColumns}};

-- name: rotateWebhookSecret
-- parameters: id UUID, secret String, overlapSeconds Int
-- returns: PartnerRecord
-- Replaces the webhook secret ($2) of an active partner ($1) that has a webhook; the replaced one signs events too
-- for $3 seconds (0: it stops at once).
UPDATE partners SET
    previous_webhook_secret = CASE WHEN $3::integer > 0 THEN webhook_secret END,
    previous_webhook_secret_expires_at = CASE WHEN $3::integer > 0
                                              THEN now() + make_interval(secs => $3::integer) END,
    webhook_secret = $2, updated_at = now()
WHERE id = $1 AND revoked_at IS NULL AND webhook_url IS NOT NULL
RETURNING {{partnerColumns}};

-- name: endPreviousWebhookSecret
-- parameters: id UUID
-- returns: PartnerRecord
-- Ends the previous webhook secret's overlap of an active partner ($1) at once.
UPDATE partners SET previous_webhook_secret = NULL, previous_webhook_secret_expires_at = NULL,
                    updated_at = now()
 WHERE id = $1 AND revoked_at IS NULL
RETURNING {{partnerColumns}};

-- name: rotateKey
-- parameters: id UUID, keyHash String, overlapSeconds Int
-- returns: PartnerRecord
-- Replaces the key hash ($2) of an active partner ($1); the replaced key is still accepted for $3 seconds (0: it is
-- refused at once).
UPDATE partners SET
    previous_key_hash = CASE WHEN $3::integer > 0 THEN key_hash END,
    previous_key_expires_at = CASE WHEN $3::integer > 0
                                   THEN now() + make_interval(secs => $3::integer) END,
    key_hash = $2, updated_at = now()
WHERE id = $1 AND revoked_at IS NULL
RETURNING {{partnerColumns}};

-- name: endPreviousKey
-- parameters: id UUID
-- returns: PartnerRecord
-- Ends the previous key's overlap of an active partner ($1) at once.
UPDATE partners SET previous_key_hash = NULL, previous_key_expires_at = NULL, updated_at = now()
 WHERE id = $1 AND revoked_at IS NULL
RETURNING {{partnerColumns}};

-- name: markRevoked
-- parameters: id UUID
-- returns: PartnerRecord
-- Soft-revokes a partner ($1); revoking twice keeps the first time.
UPDATE partners SET revoked_at = coalesce(revoked_at, now()), updated_at = now() WHERE id = $1
RETURNING {{partnerColumns}};

-- name: revoke
-- parameters: partnerID UUID
-- returns: PartnerStore.RevokedActivity
-- Stops everything of a revoked partner ($1) not yet sent, and returns its active activities for their ends
-- (functions/partner_revoke.sql).
SELECT id, template, attributes, state, last_timestamp, created_at, expires_at, follows_channel
  FROM herald_partner_revoke($1);

-- name: endActivities
-- parameters: partnerID UUID, activities [UUID], apns [String], fcm [String], timestamps [Int]
-- The revoked partner's ($1) activities ($2) ended at once: $3/$4 their ends' APNs and FCM payloads, $5 the ends'
-- timestamps (functions/partner_end_activities.sql).
SELECT herald_partner_end_activities($1, $2::uuid[], $3::text[], $4::text[], $5::bigint[]);

-- name: setSuspended
-- parameters: id UUID, suspended Bool
-- returns: PartnerRecord
-- Suspends ($2 true) or resumes an active partner ($1); suspending twice keeps the first time.
UPDATE partners SET suspended_at = CASE WHEN $2 THEN coalesce(suspended_at, now()) END,
                    updated_at = now()
 WHERE id = $1 AND revoked_at IS NULL
RETURNING {{partnerColumns}};
