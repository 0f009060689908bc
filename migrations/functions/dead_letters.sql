-- Dead-letters jobs whose last attempt never settled: the lease ran out with no attempts left,
-- typically because the handler crashed or timed out the function every time.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.bury_exhausted(p_limit integer)
RETURNS integer LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_n integer;
  v_ended jsonb;
BEGIN
  WITH dead AS (
    DELETE FROM :SLUICE_SCHEMA.jobs j
    WHERE j.id IN (
      SELECT id FROM :SLUICE_SCHEMA.jobs
      WHERE lease_token IS NOT NULL AND run_at <= now() AND attempts >= max_attempts
      ORDER BY run_at LIMIT p_limit FOR UPDATE SKIP LOCKED
    )
    RETURNING j.*, jsonb_build_object('name', 'LeaseExpired', 'attempt', j.attempts, 'at', now(),
      'message', 'The lease of the last attempt ran out before it was settled (the drain crashed or timed out)') AS e
  ), buried AS (
    INSERT INTO :SLUICE_SCHEMA.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at,
                                             last_error, errors, policy, partition_key)
    SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
           :SLUICE_SCHEMA.error_history(errors, e), policy, partition_key
    FROM dead
    ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
      errors = excluded.errors
    RETURNING 1
  ), stats AS (
    -- One row per name and queue; these attempts' times are unknown.
    INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, jobs, durations, waits)
    SELECT name, queue, 'dead', count(*), array_agg(NULL::bigint), array_agg(NULL::bigint) FROM dead GROUP BY name, queue
    RETURNING 1
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(x) FILTER (WHERE x IS NOT NULL), '[]')
  INTO v_n, v_ended
  FROM dead, LATERAL :SLUICE_SCHEMA.ended_job(id, concurrency_key, unique_key, exclusive_key, batch_id, false) x;
  PERFORM :SLUICE_SCHEMA.after_end(v_ended);
  RETURN v_n;
END
$fn$;

-- Puts dead letters back in their queue through the same enqueue as new jobs (rows as for
-- enqueue_controlled, with `id` the dead letter's id), so a concurrency limit or a uniqueness
-- lock applies to the replay too. A dead letter whose unique key is held by another job stays
-- where it is; the others keep their id, their original enqueue time and their error history.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.requeue_dead_letters(p_rows jsonb)
RETURNS TABLE (id text, status text)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  r jsonb;
  v_dead :SLUICE_SCHEMA.dead_letters;
BEGIN
  FOR r IN SELECT value FROM jsonb_array_elements(p_rows) LOOP
    IF r->>'unique_strategy' = 'until-executed' AND EXISTS (
      SELECT 1 FROM :SLUICE_SCHEMA.unique_locks u
      WHERE u.key = r->>'unique_key' AND u.job_id <> (r->>'id')::bigint AND u.expires_at >= now()
    ) THEN
      CONTINUE;
    END IF;
    DELETE FROM :SLUICE_SCHEMA.dead_letters d WHERE d.id = (r->>'id')::bigint RETURNING d.* INTO v_dead;
    IF v_dead.id IS NULL THEN
      CONTINUE;
    END IF;
    RETURN QUERY
    SELECT e.id, e.status
    FROM :SLUICE_SCHEMA.enqueue_controlled(jsonb_build_array(
      r || jsonb_build_object('errors', v_dead.errors, 'enqueued_at', v_dead.enqueued_at,
                              'unique_on_conflict', 'discard'))) e;
    v_dead := NULL;
  END LOOP;
END
$fn$;
