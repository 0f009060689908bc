-- Durable steps (docs/steps.md). A job's steps are rows of job_steps, keyed by (job, seq): seq is
-- the step's position in the order the handler calls them. Every write by a running job is
-- guarded by its lease token, so a run whose lease was lost records nothing. Waits (event waits,
-- invoked children) count in jobs.waiting; whatever resolves the last one makes the job due
-- (steps_resolved). Each kind of wait has its file: step_waits.sql (events) and
-- step_children.sql (invoked jobs); this one records steps and puts a job back.
--
-- Lock order: a step row before its job's row, and job rows in id order. Publish (wake_event_waits)
-- and settles (steps_children_ended) both follow it, so they never wait on each other in a cycle.

-- A finished step (completed, or failed: its function threw), written once the step has its
-- result. A failed step's row is rewritten by its next run (attempts counted); a completed one
-- never. The job's row is held FOR SHARE with its token: a drain that took the job over after a
-- lost lease waits for this write, and a write after the take-over finds no row and records
-- nothing. False when nothing was recorded. plpgsql, so that a drain's backend plans it once.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_record(
  p_job bigint, p_token uuid, p_seq integer, p_name text, p_kind text, p_state text, p_result jsonb,
  p_error jsonb, p_started_at timestamptz, p_wake_at timestamptz
)
RETURNS boolean LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_n integer;
BEGIN
  WITH held AS (
    SELECT j.id FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token FOR SHARE
  )
  INSERT INTO :SLUICE_SCHEMA.job_steps AS s (job_id, seq, name, kind, state, result, error, started_at, finished_at,
                                              wake_at)
  SELECT held.id, p_seq, p_name, p_kind, p_state, p_result, p_error, p_started_at, now(), p_wake_at FROM held
  ON CONFLICT (job_id, seq) DO UPDATE
  SET state = excluded.state, result = excluded.result, error = excluded.error, attempts = s.attempts + 1,
      started_at = excluded.started_at, finished_at = excluded.finished_at, wake_at = excluded.wake_at
  WHERE s.state = 'failed' AND s.kind = 'run' AND s.name = excluded.name;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n > 0;
END
$fn$;

-- Ends a run that cannot go on now (a sleep, an open wait) or that made progress up to the
-- drain's deadline: the job goes back unleased with its attempt uncounted, due at p_until (the
-- end of its sleeps; now when null), or, while waits are open, at the earliest timeout among them
-- (far in the future when none has one), read from the job's own steps, whichever run recorded
-- them. Its while-executing lock goes and its until-executed lock is queued again, as for a
-- hand-back. The job keeps its concurrency slot. Returns when the job is due next; no row when
-- the lease was lost.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.step_suspend(p_job bigint, p_token uuid, p_until timestamptz)
RETURNS TABLE (run_at timestamptz, waiting integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  -- The job's row first, in a statement of its own. A publish or a child's end that resolves one
  -- of its waits holds that row (steps_resolved) until it commits; the statement below, which
  -- reads the job's open waits, then starts after the commit and sees them resolved. Read in the
  -- statement that waited for the row, a wait resolved meanwhile would still look open, and the job
  -- would sleep until that wait's timeout.
  PERFORM 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.id = p_job AND j.lease_token = p_token FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
  WITH back AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET lease_token = NULL, leased_by = NULL, lease_until = NULL, attempts = greatest(j.attempts - 1, 0),
        -- Its open waits are counted in jobs.waiting, and read from its steps too: a dead letter
        -- retried while a wait of its was open comes back with no count.
        run_at = CASE WHEN coalesce(j.waiting, 0) > 0 OR EXISTS (
                        SELECT 1 FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = j.id AND s.state = 'waiting')
                      THEN coalesce((SELECT min(s.wake_at) FROM :SLUICE_SCHEMA.job_steps s
                                     WHERE s.job_id = j.id AND s.state = 'waiting'),
                                    :SLUICE_SCHEMA.steps_never())
                      ELSE greatest(coalesce(p_until, now()), now()) END
    WHERE j.id = p_job AND j.lease_token = p_token
    RETURNING j.id, j.unique_key, j.exclusive_key, j.run_at, j.waiting
  ), unlocked AS (
    UPDATE :SLUICE_SCHEMA.unique_locks u SET state = 'queued', owner = NULL
    FROM back WHERE u.key = back.unique_key AND u.job_id = back.id
    RETURNING 1
  ), dropped AS (
    DELETE FROM :SLUICE_SCHEMA.unique_locks u USING back
    WHERE u.key = back.exclusive_key AND u.job_id = back.id
    RETURNING 1
  )
  SELECT back.run_at, coalesce(back.waiting, 0) FROM back;
END
$fn$;

-- When a job waits with no timeout: due never, in practice (a date every client can print).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_never()
RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT '9999-12-31T00:00:00Z'::timestamptz
$fn$;

-- Makes the jobs whose waits were just resolved due when no wait of theirs is left open: the
-- jobs' rows in id order, then one update. p_jobs: one job id per wait resolved (a job that had
-- several resolved at once is named as many times). Returns, per queue, the jobs made due.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.steps_resolved(bigint[], integer[]);

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_resolved(p_jobs bigint[])
RETURNS TABLE (queue text, jobs integer)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.id = ANY (p_jobs) ORDER BY j.id FOR UPDATE;
  RETURN QUERY
  WITH r AS (
    SELECT x.id, count(*)::integer AS n FROM unnest(p_jobs) AS x(id) GROUP BY x.id
  ), woke AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET waiting = greatest(coalesce(j.waiting, 0) - r.n, 0),
        run_at = CASE WHEN coalesce(j.waiting, 0) - r.n <= 0 AND j.lease_token IS NULL THEN now() ELSE j.run_at END
    FROM r WHERE j.id = r.id
    RETURNING j.queue, (coalesce(j.waiting, 0) = 0 AND j.lease_token IS NULL) AS due
  )
  SELECT woke.queue, count(*)::integer FROM woke WHERE woke.due GROUP BY woke.queue;
END
$fn$;
