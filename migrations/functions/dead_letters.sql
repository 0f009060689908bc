-- Dead-letters jobs whose last attempt never settled: the lease ran out with no attempts left,
-- typically because the handler crashed or timed out the function every time. Found on the lease
-- rows whose end has passed (claim_leases), which it then deletes once no job is theirs: a
-- settle deletes the rows whose jobs it ended, and this clears what is left (a drain that died, a
-- lease ended by some other statement, two settles of one claim at once).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.bury_exhausted(p_limit integer)
RETURNS integer LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_n integer;
  v_ended jsonb;
  v_children jsonb;
BEGIN
  WITH dead AS (
    DELETE FROM :SLUICE_SCHEMA.jobs j
    WHERE j.id IN (
      SELECT x.id FROM :SLUICE_SCHEMA.claim_leases l
      CROSS JOIN LATERAL unnest(l.ids) AS x(id)
      JOIN :SLUICE_SCHEMA.jobs f ON f.id = x.id AND f.lease_token = l.token
      WHERE l.lease_until <= now() AND f.attempts >= f.max_attempts
      ORDER BY l.lease_until LIMIT p_limit FOR UPDATE OF f SKIP LOCKED
    )
    RETURNING j.*, jsonb_build_object('name', 'LeaseExpired', 'code', 'LEASE_EXPIRED', 'attempt', j.attempts,
      'at', now(),
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
         coalesce(jsonb_agg(x) FILTER (WHERE x IS NOT NULL), '[]'),
         coalesce(jsonb_agg(:SLUICE_SCHEMA.child_end(id, parent_id, false, NULL, e))
                  FILTER (WHERE parent_id IS NOT NULL), '[]')
  INTO v_n, v_ended, v_children
  FROM dead, LATERAL :SLUICE_SCHEMA.ended_job(id, concurrency_key, unique_key, exclusive_key, batch_id, false) x;
  PERFORM :SLUICE_SCHEMA.after_end(v_ended);
  IF jsonb_array_length(v_children) > 0 THEN
    PERFORM :SLUICE_SCHEMA.steps_children_ended(v_children);
  END IF;
  PERFORM :SLUICE_SCHEMA.claim_leases_ended(NULL, NULL);
  RETURN v_n;
END
$fn$;

-- Puts dead letters back in their queue through the same enqueue as new jobs (rows as for
-- enqueue_controlled, with `id` the dead letter's id), so a concurrency limit or a uniqueness
-- lock applies to the replay too; a requeued job keeps its id, its original enqueue time and its
-- error history. A dead letter leaves its table only in the same transaction that wrote its job:
-- one whose unique key is held by another job, or whose concurrency key is full (and does not
-- block), stays where it is, answered as 'kept' with the reason. Ids no longer dead letters (taken
-- by another call) are not answered.
--
-- Atomic under races: each dead letter is locked before its job is written, and retries take a
-- transaction-scoped advisory lock per schema first, so that two retries never take keys in
-- opposite orders; a concurrent enqueue of the same key makes the key's insert wait, and the
-- retry then sees the key held and keeps the dead letter.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.requeue_dead_letters(jsonb);

CREATE FUNCTION :SLUICE_SCHEMA.requeue_dead_letters(p_rows jsonb)
RETURNS TABLE (id text, status text, reason text)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  r jsonb;
  v_dead :SLUICE_SCHEMA.dead_letters;
  v_locked bigint[];
  v_status text;
  v_existing text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('sluice.requeue_dead_letters'), hashtext(':SLUICE_SCHEMA.dead_letters'));
  SELECT coalesce(array_agg(l.id), '{}') INTO v_locked
  FROM (
    SELECT d.id FROM :SLUICE_SCHEMA.dead_letters d
    WHERE d.id IN (SELECT (x->>'id')::bigint FROM jsonb_array_elements(p_rows) x)
    ORDER BY d.id FOR UPDATE
  ) l;

  -- In concurrency key order (then id), the order settle takes semaphores in.
  FOR r IN
    SELECT x FROM jsonb_array_elements(p_rows) x
    WHERE (x->>'id')::bigint = ANY (v_locked)
    ORDER BY x->>'concurrency_key' NULLS FIRST, (x->>'id')::bigint
  LOOP
    SELECT * INTO v_dead FROM :SLUICE_SCHEMA.dead_letters d WHERE d.id = (r->>'id')::bigint;
    -- A uniqueness lock left under the dead letter's own id belongs to no live job.
    DELETE FROM :SLUICE_SCHEMA.unique_locks u WHERE u.key = r->>'unique_key' AND u.job_id = v_dead.id;
    SELECT e.status, e.existing_id INTO v_status, v_existing
    FROM :SLUICE_SCHEMA.enqueue_controlled(jsonb_build_array(
      r || jsonb_build_object('errors', v_dead.errors, 'enqueued_at', v_dead.enqueued_at,
                              'unique_on_conflict', 'discard',
                              'concurrency_on_conflict', CASE WHEN r->>'concurrency_on_conflict' = 'block'
                                                              THEN 'block' ELSE 'discard' END))) e;
    id := v_dead.id::text;
    IF v_status IN ('enqueued', 'blocked') THEN
      DELETE FROM :SLUICE_SCHEMA.dead_letters d WHERE d.id = v_dead.id;
      status := v_status;
      reason := NULL;
    ELSIF v_status = 'duplicate' THEN
      status := 'kept';
      reason := format('unique key %s held by %s', r->>'unique_key', coalesce('job ' || v_existing, 'another job'));
    ELSE
      status := 'kept';
      reason := format('concurrency key %s at its limit of %s', r->>'concurrency_key', r->>'concurrency_limit');
    END IF;
    RETURN NEXT;
  END LOOP;
END
$fn$;
