-- Claim and settle: one statement each from the client; inside, each step sees the
-- previous one's committed work (fresh snapshots), which the concurrency semaphore needs.

-- Claims up to p_limit due jobs from the queues this drain may serve now: not paused, breaker
-- closed, not held, not served by a higher-priority drain, single-consumer queues only with
-- their lease, global caps respected. Registers or renews the drain's invocation lease.
CREATE FUNCTION :SLUICE_SCHEMA.claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_invocation text, p_priority integer, p_jobs_done integer
)
RETURNS TABLE (
  id text, queue text, name text, payload jsonb, priority smallint, attempts integer, max_attempts integer,
  token text, enqueued_at timestamptz, due_at timestamptz, single_consumer boolean
)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_until timestamptz := now() + p_lease_ms * interval '1 millisecond';
  v_open text[];
  v_ids bigint[];
  v_due timestamptz[];
  v_single boolean[];
  v_exclusive text[];
  v_skip bigint[] := '{}';
BEGIN
  -- A claim lost in a crash leaves its jobs claimable again after their lease: at-least-once
  -- holds without waiting for the WAL flush, so this statement's commit does not wait for it.
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO :SLUICE_SCHEMA.invocations AS i (id, queues, priority, expires_at, jobs_done)
  VALUES (p_invocation, p_queues, p_priority, v_until, p_jobs_done)
  ON CONFLICT ON CONSTRAINT invocations_pkey DO UPDATE SET expires_at = excluded.expires_at, jobs_done = excluded.jobs_done;

  -- Single-consumer queues: take or renew the queue lease (free, expired, or already ours).
  INSERT INTO :SLUICE_SCHEMA.queue_leases AS l (queue, holder, expires_at)
  SELECT c.name, p_invocation, v_until
  FROM :SLUICE_SCHEMA.queues c
  WHERE c.name = ANY (p_queues) AND c.single_consumer AND NOT c.paused
  ON CONFLICT ON CONSTRAINT queue_leases_pkey DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE l.holder = excluded.holder OR l.expires_at < now();

  SELECT coalesce(array_agg(q.name), '{}') INTO v_open
  FROM unnest(p_queues) AS q(name)
  LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name
  WHERE c.name IS NULL OR (
        NOT c.paused
    AND coalesce(c.breaker_until, '-infinity') <= now()
    AND coalesce(c.held_until, '-infinity') <= now()
    AND (NOT c.single_consumer OR EXISTS (
          SELECT 1 FROM :SLUICE_SCHEMA.queue_leases l WHERE l.queue = q.name AND l.holder = p_invocation))
  )
  AND NOT EXISTS (
    SELECT 1 FROM :SLUICE_SCHEMA.invocations o
    WHERE o.id <> p_invocation AND o.priority > p_priority AND o.expires_at > now() AND q.name = ANY (o.queues)
  );

  IF cardinality(v_open) = 0 THEN
    RETURN;
  END IF;

  -- Queues with a global cap: claims take turns (the row lock is held to the end of this
  -- claim), so each one counts the jobs in flight after the previous claim committed.
  PERFORM 1 FROM :SLUICE_SCHEMA.queues c
  WHERE c.name = ANY (v_open) AND c.global_cap IS NOT NULL
  ORDER BY c.name
  FOR UPDATE;

  WITH open AS (
    SELECT q.name,
           coalesce(c.single_consumer, false) AS single_consumer,
           CASE WHEN c.global_cap IS NULL THEN p_limit
                ELSE least(p_limit, greatest(0, c.global_cap - (
                  SELECT count(*)::integer FROM :SLUICE_SCHEMA.jobs f
                  WHERE f.queue = q.name AND f.lease_token IS NOT NULL AND f.run_at > now())))
           END AS room
    FROM unnest(v_open) AS q(name)
    LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name
  ), picked AS (
    SELECT p.id, p.run_at, p.priority, p.exclusive_key, open.single_consumer
    FROM open
    CROSS JOIN LATERAL (
      SELECT j.id, j.priority, j.run_at, j.exclusive_key
      FROM :SLUICE_SCHEMA.jobs j
      WHERE j.queue = open.name AND j.run_at <= now() AND j.attempts < j.max_attempts
        AND (j.exclusive_key IS NULL OR NOT EXISTS (
              SELECT 1 FROM :SLUICE_SCHEMA.unique_locks u
              WHERE u.key = j.exclusive_key AND u.job_id <> j.id AND u.expires_at >= now()))
      ORDER BY j.priority, j.run_at, j.id
      LIMIT open.room
      FOR UPDATE SKIP LOCKED
    ) p
    WHERE open.room > 0
    ORDER BY p.priority, p.run_at, p.id
    LIMIT p_limit
  )
  SELECT array_agg(id ORDER BY priority, run_at, id), array_agg(run_at ORDER BY priority, run_at, id),
         array_agg(single_consumer ORDER BY priority, run_at, id), array_agg(exclusive_key ORDER BY priority, run_at, id)
  INTO v_ids, v_due, v_single, v_exclusive
  FROM picked;

  IF v_ids IS NULL THEN
    RETURN;
  END IF;

  -- while-executing: a candidate runs only if it takes its key's lock (free, expired or its own);
  -- the first candidate of a key in claim order gets the chance. The lock's INSERT waits for a
  -- concurrent claim of the same key to commit, so two drains can never both take it.
  IF EXISTS (SELECT 1 FROM unnest(v_exclusive) k WHERE k IS NOT NULL) THEN
    WITH want AS (
      SELECT DISTINCT ON (k) id, k
      FROM unnest(v_ids, v_exclusive) WITH ORDINALITY AS w(id, k, o)
      WHERE k IS NOT NULL
      ORDER BY k, o
    ), got AS (
      INSERT INTO :SLUICE_SCHEMA.unique_locks AS u (key, job_id, strategy, state, owner, expires_at)
      SELECT k, id, 'while-executing', 'executing', p_invocation, v_until FROM want
      ON CONFLICT ON CONSTRAINT unique_locks_pkey DO UPDATE
      SET job_id = excluded.job_id, owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = now(),
          state = 'executing', strategy = 'while-executing'
      WHERE u.expires_at < now() OR u.job_id = excluded.job_id
      RETURNING u.job_id
    )
    SELECT coalesce(array_agg(w.id), '{}') INTO v_skip
    FROM unnest(v_ids, v_exclusive) AS w(id, k)
    WHERE w.k IS NOT NULL AND w.id NOT IN (SELECT job_id FROM got);
  END IF;

  RETURN QUERY
  WITH claimed AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET run_at = v_until, attempts = j.attempts + 1, lease_token = gen_random_uuid(), leased_by = p_invocation
    FROM unnest(v_ids, v_due, v_single) AS p(id, due, single)
    WHERE j.id = p.id AND NOT (p.id = ANY (v_skip))
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.lease_token, j.enqueued_at,
              p.due, p.single, j.unique_key
  ), executing AS (
    UPDATE :SLUICE_SCHEMA.unique_locks u
    SET state = 'executing', owner = p_invocation
    FROM claimed
    WHERE claimed.unique_key IS NOT NULL AND u.key = claimed.unique_key AND u.job_id = claimed.id
    RETURNING 1
  )
  SELECT c.id::text, c.queue, c.name, c.payload, c.priority, c.attempts, c.max_attempts, c.lease_token::text,
         c.enqueued_at, c.due, c.single
  FROM claimed c;
END
$fn$;

ALTER FUNCTION :SLUICE_SCHEMA.claim(text[], integer, bigint, text, integer, integer) SET plan_cache_mode = force_custom_plan;

-- Settles a batch of attempts: completions (archive), failures (retry with backoff or dead
-- letter), hand-backs (attempt uncounted); releases concurrency slots and uniqueness locks,
-- counts batches and enqueues their callbacks exactly once, drives each queue's circuit
-- breaker and writes job stats. With p_finish, also ends the invocation and counts what is left.
CREATE FUNCTION :SLUICE_SCHEMA.settle(
  p_ok jsonb, p_ko jsonb, p_back jsonb, p_invocation text, p_finish boolean, p_queues text[]
)
RETURNS TABLE (completed integer, retried integer, dead integer, handed_back integer, ready integer)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_completed integer := 0;
  v_retried integer := 0;
  v_dead integer := 0;
  v_back integer := 0;
  v_ready integer;
  v_released jsonb := '[]';
  v_outcomes jsonb := '[]';
BEGIN
  -- A settle lost in a crash means its jobs run again after their lease (at-least-once), so
  -- this statement's commit does not wait for the WAL flush either. Enqueues still do.
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Completed and expired jobs: to the archive.
  IF jsonb_array_length(p_ok) > 0 THEN
    WITH ok AS (
      SELECT * FROM jsonb_to_recordset(p_ok) AS a(i bigint, t uuid, s text, d integer, w integer)
    ), done AS (
      DELETE FROM :SLUICE_SCHEMA.jobs j USING ok WHERE j.id = ok.i AND j.lease_token = ok.t
      RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at,
                j.concurrency_key, j.unique_key, j.exclusive_key, j.batch_id, ok.s, ok.d, ok.w
    ), archived AS (
      INSERT INTO :SLUICE_SCHEMA.archive (id, queue, name, payload, priority, attempts, max_attempts, status,
                                          enqueued_at, duration_ms, wait_ms)
      SELECT id, queue, name, payload, priority, attempts, max_attempts, s, enqueued_at, d, w FROM done
      RETURNING 1
    ), stats AS (
      INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, duration_ms, wait_ms)
      SELECT name, queue, s, d, w FROM done
      RETURNING 1
    )
    SELECT count(*)::integer,
           coalesce(jsonb_agg(jsonb_build_object('id', id, 'c', concurrency_key, 'u', coalesce(unique_key, exclusive_key),
                                                 'b', batch_id, 'ok', true))
                    FILTER (WHERE concurrency_key IS NOT NULL OR unique_key IS NOT NULL OR exclusive_key IS NOT NULL
                                  OR batch_id IS NOT NULL), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('q', queue, 'ok', true)), '[]')
    INTO v_completed, v_released, v_outcomes
    FROM done;
  END IF;

  -- Failed attempts: retried with their backoff, or dead-lettered when out of attempts.
  IF jsonb_array_length(p_ko) > 0 THEN
    DECLARE
      v_dead_rel jsonb;
      v_dead_out jsonb;
      v_retry_out jsonb;
    BEGIN
      WITH ko AS (
        SELECT a.i, a.t, a.d, a.f, a.r, a.e || jsonb_build_object('at', now()) AS e, a.du, a.w
        FROM jsonb_to_recordset(p_ko) AS a(i bigint, t uuid, e jsonb, d bigint, f boolean, r timestamptz, du integer, w integer)
      ), gone AS (
        DELETE FROM :SLUICE_SCHEMA.jobs j USING ko
        WHERE j.id = ko.i AND j.lease_token = ko.t AND (ko.f OR j.attempts >= j.max_attempts)
        RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at, j.errors,
                  j.concurrency_key, j.unique_key, j.exclusive_key, j.batch_id,
                  ko.e || jsonb_build_object('attempt', j.attempts) AS e,
                  ko.du, ko.w
      ), buried AS (
        INSERT INTO :SLUICE_SCHEMA.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at,
                                                 last_error, errors)
        SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
               jsonb_path_query_array(errors || jsonb_build_array(e), '$[last - 9 to last]')
        FROM gone
        ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
          errors = excluded.errors, payload = excluded.payload
        RETURNING 1
      ), stats AS (
        INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, duration_ms, wait_ms)
        SELECT name, queue, 'dead', du, w FROM gone
        RETURNING 1
      )
      SELECT count(*)::integer,
             coalesce(jsonb_agg(jsonb_build_object('id', id, 'c', concurrency_key, 'u', coalesce(unique_key, exclusive_key),
                                                   'b', batch_id, 'ok', false))
                      FILTER (WHERE concurrency_key IS NOT NULL OR unique_key IS NOT NULL OR exclusive_key IS NOT NULL
                                    OR batch_id IS NOT NULL), '[]'),
             coalesce(jsonb_agg(jsonb_build_object('q', queue, 'ok', false)), '[]')
      INTO v_dead, v_dead_rel, v_dead_out
      FROM gone;

      -- Retries. In a single-consumer queue the job keeps its place at the head and the queue
      -- is held until the retry is due, so order is kept.
      WITH ko AS (
        SELECT a.i, a.t, a.d, a.r, a.e || jsonb_build_object('at', now()) AS e, a.du, a.w
        FROM jsonb_to_recordset(p_ko) AS a(i bigint, t uuid, e jsonb, d bigint, f boolean, r timestamptz, du integer, w integer)
        WHERE NOT a.f
      ), again AS (
        UPDATE :SLUICE_SCHEMA.jobs j
        SET run_at = CASE WHEN ko.r IS NOT NULL THEN least(ko.r, now()) ELSE now() + ko.d * interval '1 millisecond' END,
            lease_token = NULL, leased_by = NULL,
            last_error = ko.e || jsonb_build_object('attempt', j.attempts),
            errors = jsonb_path_query_array(j.errors || jsonb_build_array(ko.e || jsonb_build_object('attempt', j.attempts)),
                                            '$[last - 9 to last]')
        FROM ko
        WHERE j.id = ko.i AND j.lease_token = ko.t AND j.attempts < j.max_attempts
        RETURNING j.id, j.queue, j.name, j.exclusive_key, ko.d, ko.r, ko.du, ko.w
      ), held AS (
        UPDATE :SLUICE_SCHEMA.queues c
        SET held_until = greatest(coalesce(c.held_until, now()), now() + h.d * interval '1 millisecond')
        FROM (SELECT queue, max(d) AS d FROM again WHERE r IS NOT NULL GROUP BY queue) h
        WHERE c.name = h.queue
        RETURNING 1
      ), stats AS (
        INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status, duration_ms, wait_ms)
        SELECT name, queue, 'failed', du, w FROM again
        RETURNING 1
      ), unlocked AS (
        -- while-executing locks end with the attempt.
        DELETE FROM :SLUICE_SCHEMA.unique_locks u USING again
        WHERE u.key = again.exclusive_key AND u.job_id = again.id
        RETURNING 1
      )
      SELECT count(*)::integer, coalesce(jsonb_agg(jsonb_build_object('q', queue, 'ok', false)), '[]')
      INTO v_retried, v_retry_out
      FROM again;

      v_released := v_released || v_dead_rel;
      v_outcomes := v_outcomes || v_dead_out || v_retry_out;
    END;
  END IF;

  -- Claimed but never started: back in place, attempt uncounted.
  IF jsonb_array_length(p_back) > 0 THEN
    WITH back AS (
      SELECT * FROM jsonb_to_recordset(p_back) AS a(i bigint, t uuid, r timestamptz)
    ), returned AS (
      UPDATE :SLUICE_SCHEMA.jobs j
      SET run_at = least(back.r, now()), attempts = greatest(j.attempts - 1, 0), lease_token = NULL, leased_by = NULL
      FROM back WHERE j.id = back.i AND j.lease_token = back.t
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
    SELECT count(*)::integer INTO v_back FROM returned;
  END IF;

  PERFORM :SLUICE_SCHEMA.after_end(v_released);

  -- Circuit breakers: a success closes the breaker and resets its trips; failures count up, and
  -- at the threshold the queue pauses for base × 2^trips (capped). Only queues with a breaker and
  -- something to change are touched, so healthy queues take no row lock here.
  IF jsonb_array_length(v_outcomes) > 0 THEN
    WITH o AS (
      SELECT q, bool_or(ok) AS any_ok, count(*) FILTER (WHERE NOT ok)::integer AS failures
      FROM jsonb_to_recordset(v_outcomes) AS r(q text, ok boolean)
      GROUP BY q
    )
    UPDATE :SLUICE_SCHEMA.queues c
    SET consecutive_failures = CASE
          WHEN o.any_ok THEN 0
          WHEN c.consecutive_failures + o.failures >= c.breaker_threshold THEN 0
          ELSE c.consecutive_failures + o.failures END,
        trips = CASE
          WHEN o.any_ok THEN 0
          WHEN c.consecutive_failures + o.failures >= c.breaker_threshold THEN c.trips + 1
          ELSE c.trips END,
        breaker_until = CASE
          WHEN NOT o.any_ok AND c.consecutive_failures + o.failures >= c.breaker_threshold
          THEN now() + least(c.breaker_cap_ms, c.breaker_base_ms * (2 ^ least(c.trips, 40))::bigint) * interval '1 millisecond'
          ELSE c.breaker_until END
    FROM o
    WHERE c.name = o.q AND c.breaker_threshold IS NOT NULL
      AND (o.failures > 0 OR c.consecutive_failures > 0 OR c.trips > 0);
  END IF;

  IF p_finish THEN
    DELETE FROM :SLUICE_SCHEMA.invocations WHERE id = p_invocation;
    DELETE FROM :SLUICE_SCHEMA.queue_leases WHERE holder = p_invocation;
    SELECT count(*)::integer INTO v_ready
    FROM (SELECT 1 FROM :SLUICE_SCHEMA.jobs j
          WHERE j.queue = ANY (p_queues) AND j.run_at <= now() AND j.attempts < j.max_attempts LIMIT 1000) r;
  END IF;

  RETURN QUERY SELECT v_completed, v_retried, v_dead, v_back, v_ready;
END
$fn$;
