-- Group rows: one outbox row for up to 50 deliveries of one
-- request to one (service, environment), so the claim's lease, the completion's delete and their index
-- entries are paid once per group instead of once per delivery. What a delivery costs Postgres as one row
-- each is measured in bench/queue-designs (the lease alone is what the minimal queue does in total).
--
-- A group row keeps its members in parallel arrays (delivery id, user, device, signed payload); the
-- arrays are TOASTed and an UPDATE that does not set them keeps their pointers, so the lease's new row
-- version stays small. Its own `id` is a fresh id that is no delivery's; `user_id`, `device_id` and
-- `payload` are empty. `members_done` lists the members (1-based positions) whose outcome is recorded:
-- a completion appends to it (no indexed column changes, so a HOT update) and deletes the group with its
-- last member; a member to retry leaves the group as a single row of its own. Everything else (rescue,
-- release, lease extension) acts on the group as on a single row, and a claim skips the done members.
--
-- Only the intake's multi-recipient pushes write groups (PushStore.enqueueSQL), for 16 or more deliveries
-- of one (service, environment); Live Activity rows, backfills, replays and retries stay single rows.
ALTER TABLE deliveries
    -- How many deliveries the row was written for (1 for a single row); never updated, so the due index
    -- can carry it (the queue gauge counts deliveries from the index alone) and a completion's update of
    -- members_done stays HOT.
    ADD COLUMN member_count   integer NOT NULL DEFAULT 1,
    ADD COLUMN members        uuid[],
    ADD COLUMN member_users   text[],
    ADD COLUMN member_devices text[],
    ADD COLUMN member_payloads text[],
    ADD COLUMN members_done   integer[],
    -- Evaluated on every UPDATE of the row (each lease, each completion): nothing here may read the
    -- member arrays' contents, which would detoast them (their lengths are the writer's, PushStore).
    ADD CONSTRAINT deliveries_members_shape CHECK (
        (members IS NULL) = (member_count = 1) AND (members IS NULL OR activity_id IS NULL));

-- History: the sent members of a group that one completion records are ONE history row (most of a drain),
-- with the members' ids, users and devices as arrays, `id` the group row's id and `user_id`/`device_id`
-- empty; every other outcome (what replay may pick, what an operator looks up) keeps a row per delivery.
-- bench/queue-designs measured the history row per delivery as most of what a group's delivery still
-- costs. Read per delivery through delivery_history_deliveries.
ALTER TABLE delivery_history
    ADD COLUMN members        uuid[],
    ADD COLUMN member_users   text[],
    ADD COLUMN member_devices text[];

-- The due index of 006_worker.sql, carrying member_count.
CREATE INDEX deliveries_due_partner_counted ON deliveries (lane, partner_id, available_at) INCLUDE (member_count)
    WHERE state = 'pending';
DROP INDEX deliveries_due_partner;
ALTER INDEX deliveries_due_partner_counted RENAME TO deliveries_due_partner;

-- As in 014_drain.sql, counting deliveries (a group's members not yet done) against the quotas instead of
-- rows, and returning a group's members as rows of their own with the group's id and their position.
DROP FUNCTION IF EXISTS herald_claim_deliveries(text, integer, integer, text[], smallint[], uuid[], timestamptz[],
    integer);
-- As in 015_delivery_costs.sql, for group members too: p_groups[i] is the group row of p_ids[i] (NULL for a
-- single row) and p_members[i] its position there. A finished member is recorded from the group (the sent
-- ones together, above) and marked done; a member to retry leaves the group as a single pending row (its id, the group's
-- attempts); the group is deleted with its last member. A member whose group is no longer leased by
-- p_worker (rescued meanwhile) is not touched, as a single row is not.
DROP FUNCTION IF EXISTS herald_complete_deliveries(text, uuid[], text[], text[], text[], text[]);
