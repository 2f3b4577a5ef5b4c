-- fragment: deviceColumns
-- A device and its tokens' health, as userDevices and device return it.
d.device_id, d.platform, d.environment, d.bundle_id,
d.apns_token IS NOT NULL AS has_apns_token, d.apns_token_invalidated_at, d.apns_token_invalid_reason,
d.apns_push_to_start_token IS NOT NULL AS has_apns_push_to_start_token, d.apns_push_to_start_invalidated_at,
d.apns_push_to_start_invalid_reason,
d.fcm_token IS NOT NULL AS has_fcm_token, d.fcm_token_invalidated_at, d.fcm_token_invalid_reason,
d.registered_at, d.updated_at,
(SELECT json_agg(json_build_array(p.template, extract(epoch FROM p.invalidated_at), p.invalid_reason)
                 ORDER BY p.template)
   FROM device_push_to_start_tokens p WHERE p.user_id = d.user_id AND p.device_id = d.device_id)::text
    AS push_to_start_templates

-- name: userDevices
-- parameters: userID String
-- returns: DirectoryStore.DeviceRow
-- A user's devices with their tokens' health, by device id, in one statement: the user's existence and devices seen
-- in one snapshot. $1 user. No row when there is no such user; one row with a NULL device_id for a user without
-- devices.
SELECT {{deviceColumns}}
  FROM users u LEFT JOIN devices d ON d.user_id = u.id
 WHERE u.id = $1
 ORDER BY d.device_id;

-- name: device
-- parameters: userID String, deviceID String
-- returns: DirectoryStore.DeviceRow
-- One device with its tokens' health. $1 user, $2 device.
SELECT {{deviceColumns}}
  FROM devices d WHERE d.user_id = $1 AND d.device_id = $2;
