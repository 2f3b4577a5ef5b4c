-- The planner settings of the hot-path functions: the claim, the completion, and the Live Activity and channel
-- functions the intake and the worker call per request or per sweep.
--   plan_cache_mode = force_generic_plan: each statement is planned once per session, not again per call.
--   enable_seqscan = off: their tables start empty and grow fast (one sweep can queue a whole backlog of ends), and
--     a plan cached while they were small would read whole tables on each call long after. Each statement is written
--     for an index (the *QueryPlanTests); this keeps the planner to it.
--   jit = off: the generic plan's cost estimate grows with the table, and past JIT's threshold Postgres would
--     compile the claim on every call, for far longer than the query itself runs.
-- Set here, once, rather than as each definition's SET clauses. CREATE OR REPLACE FUNCTION drops the settings a
-- function had, so the Migrator runs this file after the definition files it applies, in their transaction
-- (Sources/Store/Migrator.swift): no caller sees one of these functions without them. A name that matches no
-- function, or several, stops the migration.
DO $$
DECLARE
    v_name text;
    v_functions regprocedure[];
BEGIN
    FOREACH v_name IN ARRAY ARRAY[
        'herald_claim_deliveries', 'herald_complete_deliveries',
        'herald_activity_audience', 'herald_activity_begin_change', 'herald_activity_claim_key',
        'herald_activity_device_state', 'herald_activity_end', 'herald_activity_ends_dispatch',
        'herald_activity_event', 'herald_activity_event_counts', 'herald_activity_settle', 'herald_activity_start',
        'herald_activity_start_budget', 'herald_activity_replace', 'herald_activity_schedule', 'herald_activity_cancel',
        'herald_activity_start_due', 'herald_activity_token', 'herald_activity_unconfirmed', 'herald_activity_update',
        'herald_expire_activities', 'herald_partner_end_activities', 'herald_partner_revoke',
        'herald_channel_change', 'herald_channel_claim', 'herald_channel_event', 'herald_channel_open',
        'herald_channel_record', 'herald_delivery_event']
    LOOP
        SELECT array_agg(p.oid::regprocedure) INTO v_functions
          FROM pg_proc p
         WHERE p.proname = v_name AND pg_function_is_visible(p.oid);
        IF coalesce(cardinality(v_functions), 0) <> 1 THEN
            RAISE EXCEPTION 'planner settings: % names % functions, not one', v_name,
                coalesce(cardinality(v_functions), 0);
        END IF;
        EXECUTE format(
            'ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan SET jit = off SET enable_seqscan = off',
            v_functions[1]);
    END LOOP;
END
$$;
