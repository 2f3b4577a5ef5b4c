-- name: write
-- A batch of the intake's pushes in one call and one transaction (sql/functions/intake_push.sql); its parameters
-- are `IntakeWriter.parameters`: 27 arrays, one element a push (the emails, wallets and slots with the numbers of
-- their pushes), $28 the channel to notify, $29..$31 the lease (worker, seconds, listener), $32 the interruption
-- levels, $33 the collapse keys (NULL when no push has one), $34 the slots' locales (NULL when no push has
-- localized variants). One row a push: `r_item` its number (1-based), `r_outcome` accepted, replay, limited or render.
SELECT * FROM herald_intake_push($1::uuid[], $2::int[], $3::int[], $4::text[], $5::text[],
    $6::timestamptz[], $7::text[], $8::text[], $9::uuid[], $10::timestamptz[], $11::text[], $12::text[],
    $13::text[], $14::text[], $15::timestamptz[], $16::int[], $17::int[], $18::text[], $19::text[],
    $20::int[], $21::text[], $22::text[], $23::int[], $24::uuid[], $25::text[], $26::text[], $27::text[],
    $28::text, $29::text, $30::integer, $31::integer, $32::text[], $33::text[], $34::text[]);
