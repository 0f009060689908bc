-- The records a settle is sent (src/sql/settle.ts has one encoder for each): JSON arrays of
-- objects whose keys are these columns' names, so each side names every field in full once.

-- Their result types gained columns (lag_ms, slow_down_ms): the old forms go first.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_completions(jsonb);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_failures(jsonb);

-- Attempts that ran to the end: completed, or expired (run past the job's timeout); how long the
-- run took (null when it never started), how long the job waited once due, and how long from
-- its claim (its admission) to its start.
CREATE FUNCTION :SLUICE_SCHEMA.settle_completions(p_ok jsonb)
RETURNS TABLE (id bigint, token uuid, status text, duration_ms bigint, wait_ms bigint, lag_ms bigint)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token, a.status, a.duration_ms, a.wait_ms, a.lag_ms
  FROM jsonb_to_recordset(p_ok) AS a(id bigint, token uuid, status text, duration_ms bigint, wait_ms bigint, lag_ms bigint)
$fn$;

-- Failed attempts: the error ({ name, message }, stamped with the time here), the backoff before
-- the next attempt, whether to dead-letter now, the time a single-consumer job keeps its place
-- until (null otherwise), how long the run took, how long the job waited once due, how long
-- from its claim to its start, and the delay a handler asked for when it said "slow down".
CREATE FUNCTION :SLUICE_SCHEMA.settle_failures(p_ko jsonb)
RETURNS TABLE (
  id bigint, token uuid, error jsonb, delay_ms bigint, final boolean, keep_place timestamptz, duration_ms bigint,
  wait_ms bigint, lag_ms bigint, slow_down_ms bigint
)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token, a.error || jsonb_build_object('at', now()), a.delay_ms, a.final, a.keep_place, a.duration_ms,
         a.wait_ms, a.lag_ms, a.slow_down_ms
  FROM jsonb_to_recordset(p_ko) AS a(
    id bigint, token uuid, error jsonb, delay_ms bigint, final boolean, keep_place timestamptz, duration_ms bigint,
    wait_ms bigint, lag_ms bigint, slow_down_ms bigint
  )
$fn$;

-- Claimed jobs never started: back in place, due when they were due before the claim.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_hand_backs(p_back jsonb)
RETURNS TABLE (id bigint, token uuid, due_at timestamptz)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.id, a.token, a.due_at FROM jsonb_to_recordset(p_back) AS a(id bigint, token uuid, due_at timestamptz)
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
