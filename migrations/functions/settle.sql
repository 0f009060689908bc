-- Settles a batch of attempts: completions (archive, with their results), failures (retry with backoff or dead
-- letter), hand-backs (attempt uncounted); releases concurrency slots and uniqueness locks,
-- counts batches and enqueues their callbacks exactly once, drives each queue's circuit
-- breaker and writes job stats (one row per name, queue and status). With p_finish, also ends
-- the invocation and counts what is left; only that last settle of a drain commits without
-- waiting for the WAL flush. Its records are those of settle_records.sql: each list is sent as
-- parallel arrays, one per column (in the order of SETTLE_COLUMNS in src/sql/settle.ts).
--
-- An orchestrator: each stage is a function of its own in settle_stages.sql.

-- It took each list as one JSON array of objects, then no results: the old forms go first.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle(jsonb, jsonb, jsonb, text, boolean, text[]);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle(
  bigint[], uuid[], text[], bigint[], bigint[], bigint[],
  bigint[], uuid[], text[], text[], text[], bigint[], boolean[], timestamptz[], bigint[], bigint[], bigint[], bigint[],
  bigint[], uuid[], timestamptz[], text, boolean, text[]);
-- Its result gained `resumed`: the same arguments, dropped to change it.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle(
  bigint[], uuid[], text[], bigint[], bigint[], bigint[], text[],
  bigint[], uuid[], text[], text[], text[], bigint[], boolean[], timestamptz[], bigint[], bigint[], bigint[], bigint[],
  bigint[], uuid[], timestamptz[], text, boolean, text[]);

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle(
  p_ok_id bigint[], p_ok_token uuid[], p_ok_status text[], p_ok_duration_ms bigint[], p_ok_wait_ms bigint[],
  p_ok_lag_ms bigint[], p_ok_result text[],
  p_ko_id bigint[], p_ko_token uuid[], p_ko_error_name text[], p_ko_error_message text[], p_ko_error_code text[],
  p_ko_delay_ms bigint[], p_ko_final boolean[], p_ko_keep_place timestamptz[], p_ko_duration_ms bigint[],
  p_ko_wait_ms bigint[], p_ko_lag_ms bigint[], p_ko_slow_down_ms bigint[],
  p_back_id bigint[], p_back_token uuid[], p_back_due_at timestamptz[],
  p_invocation text, p_finish boolean, p_queues text[]
)
-- resumed: the queues of parents that the ends of their invoked children made due (null when none).
RETURNS TABLE (completed integer, retried integer, dead integer, handed_back integer, ready integer, resumed text[])
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_completed integer := 0;
  v_retried integer := 0;
  v_dead integer := 0;
  v_back integer := 0;
  v_ready integer;
  v_released jsonb := '[]';
  v_outcomes jsonb := '[]';
  v_admission jsonb := '[]';
  v_ko_released jsonb;
  v_ko_outcomes jsonb;
  v_ko_admission jsonb;
  v_children jsonb := '[]';
  v_ko_children jsonb;
  v_resumed text[];
BEGIN
  -- A drain's last settle, sent on its own: lost in a crash, its jobs run again after their
  -- leases (at-least-once), so its commit does not wait for the WAL flush. A settle sent with
  -- the next claim keeps the server's setting: a claim forgotten by a crashed server would let a
  -- second drain run a job the first still runs. Enqueues keep it too.
  IF p_finish THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;

  IF cardinality(p_ok_id) > 0 THEN
    SELECT s.n, s.released, s.outcomes, s.admission, s.children
    INTO v_completed, v_released, v_outcomes, v_admission, v_children
    FROM :SLUICE_SCHEMA.settle_complete(p_ok_id, p_ok_token, p_ok_status, p_ok_duration_ms, p_ok_wait_ms, p_ok_lag_ms,
                                        p_ok_result) s;
  END IF;

  IF cardinality(p_ko_id) > 0 THEN
    SELECT s.dead, s.retried, s.released, s.outcomes, s.admission, s.children
    INTO v_dead, v_retried, v_ko_released, v_ko_outcomes, v_ko_admission, v_ko_children
    FROM :SLUICE_SCHEMA.settle_fail(
      p_ko_id, p_ko_token, p_ko_error_name, p_ko_error_message, p_ko_error_code, p_ko_delay_ms, p_ko_final,
      p_ko_keep_place, p_ko_duration_ms, p_ko_wait_ms, p_ko_lag_ms, p_ko_slow_down_ms) s;
    v_released := v_released || v_ko_released;
    v_outcomes := v_outcomes || v_ko_outcomes;
    v_admission := v_admission || v_ko_admission;
    v_children := v_children || v_ko_children;
  END IF;

  IF cardinality(p_back_id) > 0 THEN
    v_back := :SLUICE_SCHEMA.settle_hand_back(p_back_id, p_back_token, p_back_due_at);
  END IF;

  -- Only the jobs with a lock, a slot or a batch to release are in v_released.
  IF jsonb_array_length(v_released) > 0 THEN
    PERFORM :SLUICE_SCHEMA.after_end(v_released);
  END IF;

  -- Jobs a parent invoked (ctx.invoke): their ends resolve its steps, and the last one wakes it.
  IF jsonb_array_length(v_children) > 0 THEN
    v_resumed := :SLUICE_SCHEMA.steps_children_ended(v_children);
  END IF;

  -- Admission policies: adaptive caps and "slow down" requests, per partition.
  IF jsonb_array_length(v_admission) > 0 THEN
    PERFORM :SLUICE_SCHEMA.admission_settled(v_admission);
  END IF;

  IF jsonb_array_length(v_outcomes) > 0 THEN
    PERFORM :SLUICE_SCHEMA.settle_breakers(v_outcomes);
  END IF;

  -- The lease rows of the jobs whose leases ended here (claim_leases.sql).
  PERFORM :SLUICE_SCHEMA.claim_leases_ended(p_ok_token || p_ko_token || p_back_token,
                                            v_completed + v_dead + v_retried + v_back);

  IF p_finish THEN
    v_ready := :SLUICE_SCHEMA.settle_finish(p_invocation, p_queues);
  END IF;

  RETURN QUERY SELECT v_completed, v_retried, v_dead, v_back, v_ready, v_resumed;
END
$fn$;
