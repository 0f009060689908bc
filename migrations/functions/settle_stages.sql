-- The stages of a settle (settle.sql calls them in this order), each a function of its own
-- with named, typed parameters: the columns of one record list (settle_records.sql decodes
-- them), or what an earlier stage returned. Each writes its job stats with its rows (one row per
-- name, queue and status), and returns what the stages after it need: the ended jobs for
-- after_end, each attempt's outcome for the circuit breakers, and for admission policies.
--
--   settle_complete   completed and expired jobs, to the archive (unless their queue keeps none)
--   settle_fail       failed attempts: dead-lettered when out of attempts (or final), else
--                     retried with their backoff
--   settle_hand_back  claimed jobs never started: back in place, attempt uncounted
--   (steps_children_ended: jobs a parent invoked wake it, in steps.sql)
--   (after_end, admission_settled: common to every ended job, in their own files)
--   settle_breakers   each queue's circuit breaker, from the attempts' outcomes (in
--                     settle_breakers.sql, with what a failure counts as)
--   settle_finish     a drain's last settle: its invocation and queue leases end, and what is
--                     left due in its queues is counted
--
-- Every row is matched on (id, lease token): a late ack from a drain whose lease ran out
-- changes nothing.

-- Before results and invoked children, they took no p_result and returned no children.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_complete(bigint[], uuid[], text[], bigint[], bigint[], bigint[]);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.settle_fail(
  bigint[], uuid[], text[], text[], text[], bigint[], boolean[], timestamptz[], bigint[], bigint[], bigint[], bigint[]);

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_complete(
  p_id bigint[], p_token uuid[], p_status text[], p_duration_ms bigint[], p_wait_ms bigint[], p_lag_ms bigint[],
  p_result text[],
  OUT n integer, OUT released jsonb, OUT outcomes jsonb, OUT admission jsonb, OUT children jsonb
)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
BEGIN
  WITH done AS (
    DELETE FROM :SLUICE_SCHEMA.jobs j USING :SLUICE_SCHEMA.settle_completions(
      p_id, p_token, p_status, p_duration_ms, p_wait_ms, p_lag_ms, p_result
    ) ok
    WHERE j.id = ok.id AND j.lease_token = ok.token
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at,
              j.concurrency_key, j.unique_key, j.exclusive_key, j.batch_id, ok.status AS s, ok.duration_ms AS d,
              ok.wait_ms AS w, j.policy, j.partition_key, ok.lag_ms AS lag, j.errors, j.leased_by, ok.result AS r,
              j.parent_id
  ), archived AS (
    -- With the failed attempts before it, if any, the invocation that ran it (the job's timeline,
    -- 0018_attempt_history.sql) and its result. One row per queue, status, invocation and range
    -- of 1,024 ids, each job's columns as elements of arrays (0023_archive_groups.sql): the
    -- aggregates of one group read its jobs in the same order, so element k of each array is the
    -- same job. Not for a queue that keeps no archive (0021_queue_archive.sql): its jobs end here,
    -- counted in the stats below.
    INSERT INTO :SLUICE_SCHEMA.archive_groups (bucket, queue, status, invocation, ids, names, payloads, priorities,
                                               attempts, max_attempts, enqueued_at, durations_ms, waits_ms,
                                               errors, results)
    SELECT id >> 10, queue, s, leased_by, array_agg(id), array_agg(name), array_agg(payload), array_agg(priority),
           array_agg(attempts), array_agg(max_attempts), array_agg(enqueued_at), array_agg(d), array_agg(w),
           array_agg(nullif(errors, '[]'::jsonb)), array_agg(r)
    FROM done
    WHERE queue <> ALL (ARRAY(SELECT q.name FROM :SLUICE_SCHEMA.queues q WHERE NOT q.archive))
    GROUP BY id >> 10, queue, s, leased_by
    RETURNING 1
  ), stats AS (
    -- One row per name, queue and status, with every attempt's times (0015_job_stats_batches.sql).
    INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, jobs, durations, waits)
    SELECT name, queue, s, count(*), array_agg(d), array_agg(w) FROM done GROUP BY name, queue, s
    RETURNING 1
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(e) FILTER (WHERE e IS NOT NULL), '[]'),
         -- One success per queue: the breakers read, per queue, whether any attempt succeeded.
         (SELECT coalesce(jsonb_agg(:SLUICE_SCHEMA.settle_outcome(q.queue, true)), '[]')
          FROM (SELECT DISTINCT d.queue FROM done d) q),
         -- Only an adaptive policy's jobs carry their lag, and only such a partition has anything
         -- to update (admission_settled).
         coalesce(jsonb_agg(:SLUICE_SCHEMA.admission_outcome(policy, partition_key, true, lag, NULL))
                  FILTER (WHERE policy IS NOT NULL AND lag IS NOT NULL), '[]'),
         -- Jobs that a parent invoked: their ends resolve the parent's steps (steps_children_ended).
         coalesce(jsonb_agg(:SLUICE_SCHEMA.child_end(id, parent_id, s = 'completed', r,
                              CASE WHEN s <> 'completed' THEN jsonb_build_object(
                                'name', 'JobExpiredError', 'message', 'The job expired in its queue') END))
                  FILTER (WHERE parent_id IS NOT NULL), '[]')
  INTO n, released, outcomes, admission, children
  FROM done, LATERAL :SLUICE_SCHEMA.ended_job(id, concurrency_key, unique_key, exclusive_key, batch_id, true) e;
END
$fn$;

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_fail(
  p_id bigint[], p_token uuid[], p_error_name text[], p_error_message text[], p_error_code text[],
  p_delay_ms bigint[], p_final boolean[], p_keep_place timestamptz[], p_duration_ms bigint[], p_wait_ms bigint[],
  p_lag_ms bigint[], p_slow_down_ms bigint[],
  OUT dead integer, OUT retried integer, OUT released jsonb, OUT outcomes jsonb, OUT admission jsonb,
  OUT children jsonb
)
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_dead_out jsonb;
  v_retry_out jsonb;
  v_dead_adm jsonb;
  v_retry_adm jsonb;
BEGIN
  WITH gone AS (
    DELETE FROM :SLUICE_SCHEMA.jobs j USING :SLUICE_SCHEMA.settle_failures(
      p_id, p_token, p_error_name, p_error_message, p_error_code, p_delay_ms, p_final, p_keep_place,
      p_duration_ms, p_wait_ms, p_lag_ms, p_slow_down_ms
    ) ko
    WHERE j.id = ko.id AND j.lease_token = ko.token AND (ko.final OR j.attempts >= j.max_attempts)
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at, j.errors,
              j.concurrency_key, j.unique_key, j.exclusive_key, j.batch_id,
              ko.error || :SLUICE_SCHEMA.attempt_facts(j.attempts, ko.duration_ms, j.leased_by) AS e,
              ko.duration_ms AS du, ko.wait_ms AS w, j.policy, j.partition_key, ko.lag_ms AS lag,
              ko.slow_down_ms AS slow, j.parent_id
  ), buried AS (
    INSERT INTO :SLUICE_SCHEMA.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at,
                                             last_error, errors, policy, partition_key)
    SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
           :SLUICE_SCHEMA.error_history(errors, e), policy, partition_key
    FROM gone
    ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
      errors = excluded.errors, payload = excluded.payload, policy = excluded.policy,
      partition_key = excluded.partition_key
    RETURNING 1
  ), stats AS (
    INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, jobs, durations, waits)
    SELECT name, queue, 'dead', count(*), array_agg(du), array_agg(w) FROM gone GROUP BY name, queue
    RETURNING 1
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(x) FILTER (WHERE x IS NOT NULL), '[]'),
         coalesce(jsonb_agg(:SLUICE_SCHEMA.settle_outcome(queue, :SLUICE_SCHEMA.breaker_verdict(e))), '[]'),
         coalesce(jsonb_agg(:SLUICE_SCHEMA.admission_outcome(policy, partition_key, false, lag, slow))
                  FILTER (WHERE policy IS NOT NULL AND (lag IS NOT NULL OR slow IS NOT NULL)), '[]'),
         coalesce(jsonb_agg(:SLUICE_SCHEMA.child_end(id, parent_id, false, NULL, e))
                  FILTER (WHERE parent_id IS NOT NULL), '[]')
  INTO dead, released, v_dead_out, v_dead_adm, children
  FROM gone, LATERAL :SLUICE_SCHEMA.ended_job(id, concurrency_key, unique_key, exclusive_key, batch_id, false) x;

  -- Retries. In a single-consumer queue the job keeps its place at the head and the queue
  -- is held until the retry is due, so order is kept.
  WITH again AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET run_at = CASE WHEN ko.keep_place IS NOT NULL THEN least(ko.keep_place, now())
                      ELSE now() + ko.delay_ms * interval '1 millisecond' END,
        lease_token = NULL, leased_by = NULL, lease_until = NULL,
        last_error = ko.error || :SLUICE_SCHEMA.attempt_facts(j.attempts, ko.duration_ms, j.leased_by),
        errors = :SLUICE_SCHEMA.error_history(j.errors, ko.error || :SLUICE_SCHEMA.attempt_facts(j.attempts, ko.duration_ms, j.leased_by))
    FROM :SLUICE_SCHEMA.settle_failures(
      p_id, p_token, p_error_name, p_error_message, p_error_code, p_delay_ms, p_final, p_keep_place,
      p_duration_ms, p_wait_ms, p_lag_ms, p_slow_down_ms
    ) ko
    WHERE j.id = ko.id AND j.lease_token = ko.token AND NOT ko.final AND j.attempts < j.max_attempts
    RETURNING j.id, j.queue, j.name, j.exclusive_key, ko.delay_ms AS d, ko.keep_place AS r, ko.duration_ms AS du,
              ko.wait_ms AS w, j.policy, j.partition_key, ko.lag_ms AS lag, ko.slow_down_ms AS slow,
              ko.error AS e
  ), held AS (
    UPDATE :SLUICE_SCHEMA.queues c
    SET held_until = greatest(coalesce(c.held_until, now()), now() + h.d * interval '1 millisecond')
    FROM (SELECT queue, max(d) AS d FROM again WHERE r IS NOT NULL GROUP BY queue) h
    WHERE c.name = h.queue
    RETURNING 1
  ), stats AS (
    INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, jobs, durations, waits)
    SELECT name, queue, 'failed', count(*), array_agg(du), array_agg(w) FROM again GROUP BY name, queue
    RETURNING 1
  ), unlocked AS (
    -- while-executing locks end with the attempt.
    DELETE FROM :SLUICE_SCHEMA.unique_locks u USING again
    WHERE u.key = again.exclusive_key AND u.job_id = again.id
    RETURNING 1
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(:SLUICE_SCHEMA.settle_outcome(queue, :SLUICE_SCHEMA.breaker_verdict(e))), '[]'),
         coalesce(jsonb_agg(:SLUICE_SCHEMA.admission_outcome(policy, partition_key, false, lag, slow))
                  FILTER (WHERE policy IS NOT NULL AND (lag IS NOT NULL OR slow IS NOT NULL)), '[]')
  INTO retried, v_retry_out, v_retry_adm
  FROM again;
  outcomes := v_dead_out || v_retry_out;
  admission := v_dead_adm || v_retry_adm;
END
$fn$;

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_hand_back(p_id bigint[], p_token uuid[], p_due_at timestamptz[])
RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  n integer;
BEGIN
  WITH returned AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET run_at = least(back.due_at, now()), attempts = greatest(j.attempts - 1, 0), lease_token = NULL, leased_by = NULL,
        lease_until = NULL
    FROM :SLUICE_SCHEMA.settle_hand_backs(p_id, p_token, p_due_at) back
    WHERE j.id = back.id AND j.lease_token = back.token
    RETURNING j.id, j.unique_key, j.exclusive_key
  ), unlocked AS (
    UPDATE :SLUICE_SCHEMA.unique_locks u SET state = 'queued', owner = NULL
    FROM returned WHERE u.key = returned.unique_key AND u.job_id = returned.id
    RETURNING 1
  ), dropped AS (
    DELETE FROM :SLUICE_SCHEMA.unique_locks u USING returned
    WHERE u.key = returned.exclusive_key AND u.job_id = returned.id
    RETURNING 1
  )
  SELECT count(*)::integer INTO n FROM returned;
  RETURN n;
END
$fn$;

-- A drain's last settle: its invocation and its single-consumer queue leases end; returns the
-- due jobs left in its queues, counted up to 1,000.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_finish(p_invocation text, p_queues text[])
RETURNS integer
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  DELETE FROM :SLUICE_SCHEMA.invocations WHERE id = p_invocation;
  DELETE FROM :SLUICE_SCHEMA.queue_leases WHERE holder = p_invocation;
  RETURN :SLUICE_SCHEMA.queue_ready(p_queues, 1000);
END
$fn$;
