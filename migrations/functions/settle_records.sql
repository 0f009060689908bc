-- The records a settle is sent (src/sql/settle.ts has one encoder for each): parallel typed
-- arrays, one per column, read with a multi-argument unnest (one row per index), so each side
-- names every field in full once and the server parses no JSON for them.

-- They were JSON arrays of objects: the old forms go first.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_completions(jsonb);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_failures(jsonb);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_hand_backs(jsonb);

-- Attempts that ran to the end: completed, or expired (run past the job's timeout); how long the
-- run took (null when it never started), how long the job waited once due, how long from its
-- claim (its admission) to its start, and the handler's result as JSON text (null for none; the
-- whole array is null when no job of the batch returned anything).
-- Before results, it took no p_result.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_completions(bigint[], uuid[], text[], bigint[], bigint[], bigint[]);

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_completions(
  p_id bigint[], p_token uuid[], p_status text[], p_duration_ms bigint[], p_wait_ms bigint[], p_lag_ms bigint[],
  p_result text[]
)
RETURNS TABLE (id bigint, token uuid, status text, duration_ms bigint, wait_ms bigint, lag_ms bigint, result jsonb)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token, a.status, a.duration_ms, a.wait_ms, a.lag_ms, a.result::jsonb
  FROM unnest(p_id, p_token, p_status, p_duration_ms, p_wait_ms, p_lag_ms, p_result)
    AS a(id, token, status, duration_ms, wait_ms, lag_ms, result)
$fn$;

-- Failed attempts: the error (name, message and, for Sluice's own errors, code; made one JSON
-- object stamped with the time here), the backoff before the next attempt, whether to
-- dead-letter now, the time a single-consumer job keeps its place until (null otherwise), how
-- long the run took, how long the job waited once due, how long from its claim to its start, and
-- the delay a handler asked for when it said "slow down".
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_failures(
  p_id bigint[], p_token uuid[], p_error_name text[], p_error_message text[], p_error_code text[],
  p_delay_ms bigint[], p_final boolean[], p_keep_place timestamptz[], p_duration_ms bigint[], p_wait_ms bigint[],
  p_lag_ms bigint[], p_slow_down_ms bigint[]
)
RETURNS TABLE (
  id bigint, token uuid, error jsonb, delay_ms bigint, final boolean, keep_place timestamptz, duration_ms bigint,
  wait_ms bigint, lag_ms bigint, slow_down_ms bigint
)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token,
         jsonb_build_object('name', a.error_name, 'message', a.error_message, 'at', now())
           || CASE WHEN a.error_code IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('code', a.error_code) END,
         a.delay_ms, a.final, a.keep_place, a.duration_ms, a.wait_ms, a.lag_ms, a.slow_down_ms
  FROM unnest(p_id, p_token, p_error_name, p_error_message, p_error_code, p_delay_ms, p_final, p_keep_place,
              p_duration_ms, p_wait_ms, p_lag_ms, p_slow_down_ms)
    AS a(id, token, error_name, error_message, error_code, delay_ms, final, keep_place, duration_ms, wait_ms, lag_ms,
         slow_down_ms)
$fn$;

-- What a failed attempt's entry in the job's error history says of the attempt besides its error
-- (stamped `at` its settle): its number, how long it ran and the drain invocation that ran it, so
-- that the job's page can show each attempt's start, end and drain. Written on the failure path
-- only: a completion archives the job with its duration instead.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.attempt_facts(p_attempt integer, p_duration_ms bigint, p_invocation text)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_strip_nulls(jsonb_build_object('attempt', p_attempt, 'durationMs', p_duration_ms,
                                              'invocation', p_invocation))
$fn$;

-- Claimed jobs never started: back in place, due when they were due before the claim.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_hand_backs(p_id bigint[], p_token uuid[], p_due_at timestamptz[])
RETURNS TABLE (id bigint, token uuid, due_at timestamptz)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token, a.due_at FROM unnest(p_id, p_token, p_due_at) AS a(id, token, due_at)
$fn$;

-- Inside settle, each attempt's outcome for its queue's circuit breaker: whether it succeeded.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_outcome(p_queue text, p_succeeded boolean)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_build_object('queue', p_queue, 'succeeded', p_succeeded)
$fn$;

-- A JSON array of settle_outcome's records.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_outcomes(p_outcomes jsonb)
RETURNS TABLE (queue text, succeeded boolean)
LANGUAGE sql STABLE
AS $fn$
  SELECT o.queue, o.succeeded FROM jsonb_to_recordset(p_outcomes) AS o(queue text, succeeded boolean)
$fn$;
