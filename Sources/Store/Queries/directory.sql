-- name: putUser
-- Creates or replaces a user: $1 user, $2 tenant, $3 emails, $4 wallets, $5 time zone, $6-$7 quiet hours' start
-- and end, $8 locale, $9 whether to set it (else kept); `created` says whether the user is new, `locale` is the one
-- it has now (functions/put_user.sql).
SELECT p.created, p.locale
  FROM herald_put_user($1, $2, $3::text[], $4::text[], $5, $6::time, $7::time, p_locale => $8,
                       p_set_locale => $9::boolean) AS p;

-- name: putDevice
-- Creates or updates a device, taking its tokens from any other device row: $1 user, $2 device, $3 platform,
-- $4 environment, $5 bundle id, $6 APNs token, $7 push-to-start token, $8 FCM token, $9 per-template
-- push-to-start tokens (a JSON object) (functions/put_device.sql).
SELECT created, taken FROM herald_put_device($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb);

-- name: deleteDevice
-- parameters: userID String, deviceID String
-- One device of a user ($1 user, $2 device).
DELETE FROM devices WHERE user_id = $1 AND device_id = $2;

-- name: touchSession
-- parameters: userID String, miniAppID String
-- returns: DirectoryStore.SessionSeen
-- Records that the user ($1) used the mini-app ($2) now.
INSERT INTO mini_app_sessions (user_id, mini_app_id, last_seen_at) VALUES ($1, $2, now())
ON CONFLICT (user_id, mini_app_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at
RETURNING last_seen_at;

-- name: optOut
-- parameters: userID String, miniAppID String
-- The user ($1) opts out of a mini-app ($2).
INSERT INTO opt_outs (user_id, mini_app_id) VALUES ($1, $2) ON CONFLICT DO NOTHING;

-- name: optIn
-- parameters: userID String, miniAppID String
-- The user ($1) opts back in to a mini-app ($2).
DELETE FROM opt_outs WHERE user_id = $1 AND mini_app_id = $2;

-- name: userExists
-- parameters: userID String
-- A row when the user ($1) exists.
SELECT 1 AS found FROM users WHERE id = $1;

-- name: senders
-- parameters: userID String
-- returns: DirectoryStore.Sender
-- Every mini-app that pushed to the user ($1) or that the user opted out of, with the opt-out state and the
-- active partner's name and whether it has an icon.
SELECT m.mini_app_id, p.display_name, p.icon_updated_at IS NOT NULL AS has_icon,
       s.first_sent_at, o.user_id IS NOT NULL AS opted_out
  FROM (SELECT mini_app_id FROM user_senders WHERE user_id = $1
        UNION SELECT mini_app_id FROM opt_outs WHERE user_id = $1) AS m
  LEFT JOIN user_senders s ON s.user_id = $1 AND s.mini_app_id = m.mini_app_id
  LEFT JOIN opt_outs o ON o.user_id = $1 AND o.mini_app_id = m.mini_app_id
  LEFT JOIN partners p ON p.mini_app_id = m.mini_app_id AND p.revoked_at IS NULL
 ORDER BY m.mini_app_id;

-- name: userLocale
-- parameters: userID String
-- returns: DirectoryStore.UserLocale
-- The user's locale (sql/063_user_locale.sql; NULL: none), by the users' primary key: a Live Activity alert with
-- localized variants is rendered in the one it matches.
SELECT locale FROM users WHERE id = $1;
