-- name: create
-- parameters: tokenHash String, seconds Int, client String?, adminTokenMAC String
-- returns: ConsoleSession
-- A new session: $1 token hash, $2 seconds it lives, $3 client address, $4 the admin token's MAC.
INSERT INTO console_sessions (token_hash, expires_at, client, admin_token_mac)
VALUES ($1, now() + make_interval(secs => $2), $3, $4)
RETURNING token_hash, created_at, expires_at, last_used_at;

-- name: find
-- parameters: tokenHash String, idleSeconds Int, adminTokenMAC String, previousAdminTokenMAC String?
-- returns: ConsoleSession
-- The live session by primary key: $1 token hash, $2 idle seconds, $3 and $4 the admin token MACs accepted now.
SELECT token_hash, created_at, expires_at, last_used_at FROM console_sessions
 WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now()
   AND last_used_at > now() - make_interval(secs => $2)
   AND admin_token_mac IN ($3, $4);

-- name: touch
-- parameters: tokenHash String, intervalSeconds Int
-- Records a use by primary key ($1 token hash); a no-op when another intake wrote it within $2 seconds.
UPDATE console_sessions SET last_used_at = now()
 WHERE token_hash = $1 AND last_used_at < now() - make_interval(secs => $2);

-- name: revoke
-- parameters: tokenHash String
-- Ends a live session ($1 token hash).
UPDATE console_sessions SET revoked_at = now()
 WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > now();

-- name: attemptSignIn
-- parameters: client String, limit Int, windowSeconds Int
-- returns: ConsoleSignInAttempt
-- Counts a failed sign-in of $1 (client) unless it failed $2 times in its window of $3 seconds.
SELECT admitted, retry_after FROM herald_console_sign_in_attempt($1, $2, $3);

-- name: signInSucceeded
-- parameters: client String
-- Gives back the failure counted for a sign-in that succeeded, by primary key ($1 client).
UPDATE console_sign_in_failures SET failures = failures - 1 WHERE client = $1 AND failures > 0;
