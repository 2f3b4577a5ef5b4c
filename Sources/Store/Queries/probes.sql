-- name: ready
-- returns: NoRow
-- Answers when the database does: the intake's readiness probe (GET /readyz).
SELECT 1 AS ready;
