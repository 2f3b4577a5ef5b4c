-- The intake's one-statement push for recipients with up to a few devices. 013's function wrote a push
-- only when it resolved to one device; two or more went back to the handler ('render'), which then ran
-- a pipeline of three statements and a second transaction. At 1,000 pushes/s with a fifth of the users on two devices,
-- those pushes took a third of Postgres' time and made the deliveries' p99.
--
-- Now the handler renders a few delivery slots up front (each its own signed id, both services'
-- payloads: Sources/Store/PushPreparation.swift), and a push whose devices fit its slots is written
-- here, one delivery per device in (user, device) order, slot k to the k-th device. Only a push
-- with more devices than slots goes back as 'render'. The slots are flattened like the emails:
-- p_s_end[i] is push i's cumulative end offset in p_delivery, p_apns and p_fcm.
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[],
    timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], timestamptz[], integer[], text[], text[],
    integer[], text[], text[], uuid[], text[], text[]);
