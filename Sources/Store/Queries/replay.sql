-- The fixed statements of `heraldctl replay` (ReplayStore). Its batch statement is built per combination of
-- selectors in ReplayStore.statement, so each is planned for the index that serves it.

-- name: partnerIDs
-- The partner ids of mini-app $1, revoked ones too (their deliveries are still in history).
SELECT id FROM partners WHERE mini_app_id = $1 ORDER BY created_at;

-- name: customPlans
-- Plans this transaction's statements for the values given (SET LOCAL plan_cache_mode): a generic plan of a
-- replay batch's optional time bounds would read every partition.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true) AS plan_cache_mode;
