-- Counts a console sign-in attempt from `p_client` as a failure before its token is checked, unless the address
-- already failed `p_limit` times in its window (`p_window_seconds` from its first failure): then `admitted` is
-- false and `retry_after` says when the window ends. Counting first keeps the limit exact when attempts race on
-- several intakes (the address's advisory lock orders them); a sign-in that succeeds gives its count back
-- (ConsoleSessionStore.succeededSignInSQL).
CREATE OR REPLACE FUNCTION herald_console_sign_in_attempt(
    p_client text, p_limit integer, p_window_seconds integer, OUT admitted boolean, OUT retry_after integer)
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := clock_timestamp();
    v_window interval := make_interval(secs => p_window_seconds);
    v_start timestamptz;
    v_failures integer;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended(p_client, 7303));
    SELECT window_start, failures INTO v_start, v_failures FROM console_sign_in_failures WHERE client = p_client;
    IF v_start IS NULL OR v_start <= v_now - v_window THEN
        INSERT INTO console_sign_in_failures (client, window_start, failures) VALUES (p_client, v_now, 1)
        ON CONFLICT (client) DO UPDATE SET window_start = EXCLUDED.window_start, failures = 1;
        admitted := true;
    ELSIF v_failures >= p_limit THEN
        admitted := false;
        retry_after := greatest(1, ceil(extract(epoch FROM v_start + v_window - v_now)))::integer;
    ELSE
        UPDATE console_sign_in_failures SET failures = failures + 1 WHERE client = p_client;
        admitted := true;
    END IF;
END
$$;
