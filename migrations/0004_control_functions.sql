-- The functions behind the job controls: slots, locks and batch counters when a job ends,
-- enqueueing with controls, sealing batches, replaying dead letters, and the maintenance of
-- semaphores and exhausted jobs. Functions, so that each step sees the previous one's
-- committed work; still one statement from the client.

-- Fills the free slots of the given keys with blocked jobs, most urgent and oldest first; the
-- promoted jobs keep their id and take the slot. Locks the semaphore rows first, in key order
-- (the order every writer uses), so a concurrent enqueue either sees the slot taken or has its
-- blocked job visible here.
CREATE FUNCTION :SLUICE_SCHEMA.promote_free(p_keys text[])
RETURNS integer LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_promoted integer;
BEGIN
  IF p_keys IS NULL OR cardinality(p_keys) = 0 THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM :SLUICE_SCHEMA.semaphores WHERE key = ANY (p_keys) ORDER BY key FOR UPDATE;
  WITH free AS (
    SELECT s.key AS k, s.lim - s.value AS n FROM :SLUICE_SCHEMA.semaphores s
    WHERE s.key = ANY (p_keys) AND s.value < s.lim
  ), chosen AS (
    SELECT b.id FROM free
    CROSS JOIN LATERAL (
      SELECT id FROM :SLUICE_SCHEMA.blocked
      WHERE concurrency_key = free.k
      ORDER BY priority, id
      LIMIT free.n
      FOR UPDATE SKIP LOCKED
    ) b
  ), moved AS (
    DELETE FROM :SLUICE_SCHEMA.blocked b USING chosen WHERE b.id = chosen.id RETURNING b.*
  ), promoted AS (
    INSERT INTO :SLUICE_SCHEMA.jobs (id, queue, name, payload, priority, max_attempts, run_at, enqueued_at,
                                     concurrency_key, unique_key, exclusive_key, batch_id)
    SELECT id, queue, name, payload, priority, max_attempts, greatest(run_at, now()), enqueued_at,
           concurrency_key, unique_key, exclusive_key, batch_id
    FROM moved
    RETURNING concurrency_key
  ), per_key AS (
    SELECT concurrency_key AS k, count(*)::integer AS n FROM promoted GROUP BY 1
  ), taken AS (
    UPDATE :SLUICE_SCHEMA.semaphores s SET value = s.value + per_key.n
    FROM per_key WHERE s.key = per_key.k
    RETURNING 1
  )
  SELECT coalesce(sum(n), 0)::integer INTO v_promoted FROM per_key;
  RETURN v_promoted;
END
$fn$;

-- Gives back `n` slots of each key (jobs that finished), then refills them from the blocked jobs.
CREATE FUNCTION :SLUICE_SCHEMA.release_slots(p_keys text[], p_counts integer[])
RETURNS integer LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
BEGIN
  IF p_keys IS NULL OR cardinality(p_keys) = 0 THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM :SLUICE_SCHEMA.semaphores WHERE key = ANY (p_keys) ORDER BY key FOR UPDATE;
  UPDATE :SLUICE_SCHEMA.semaphores s
  SET value = greatest(0, s.value - f.n), expires_at = now() + s.ttl_ms * interval '1 millisecond'
  FROM (SELECT k, sum(n)::integer AS n FROM unnest(p_keys, p_counts) AS f(k, n) GROUP BY k) f
  WHERE s.key = f.k;
  RETURN :SLUICE_SCHEMA.promote_free(p_keys);
END
$fn$;

-- Enqueues the callbacks of batches that just finished, with the batch properties as input.
CREATE FUNCTION :SLUICE_SCHEMA.fire_batch_callbacks(p_batches bigint[])
RETURNS void LANGUAGE sql
SET jit = off
AS $fn$
  INSERT INTO :SLUICE_SCHEMA.jobs (queue, name, payload, priority, max_attempts)
  SELECT cb.value->>'queue', cb.value->>'name', x.properties, (cb.value->>'priority')::smallint,
         (cb.value->>'maxAttempts')::integer
  FROM :SLUICE_SCHEMA.batches x
  CROSS JOIN LATERAL jsonb_each(x.callbacks) AS cb
  WHERE x.id = ANY (coalesce(p_batches, '{}'))
    AND (cb.key = 'onFinish'
      OR (cb.key = 'onSuccess' AND x.discarded = 0)
      OR (cb.key = 'onDiscard' AND x.discarded > 0));
$fn$;

-- What follows a job's end (completed, expired or dead-lettered), for the jobs described in
-- p_ended ([{ id, c: concurrency key, u: unique key, b: batch id, ok }]): its uniqueness lock
-- goes, its concurrency slot is given back (and refilled), its batch is counted; a batch that
-- this completes gets its callbacks enqueued, exactly once (the batch row lock orders concurrent
-- callers; only the one that completes the count sees it finish).
CREATE FUNCTION :SLUICE_SCHEMA.after_end(p_ended jsonb)
RETURNS void LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_finished bigint[];
BEGIN
  IF p_ended IS NULL OR jsonb_array_length(p_ended) = 0 THEN
    RETURN;
  END IF;

  DELETE FROM :SLUICE_SCHEMA.unique_locks u
  USING jsonb_to_recordset(p_ended) AS r(id bigint, u text)
  WHERE r.u IS NOT NULL AND u.key = r.u AND u.job_id = r.id;

  PERFORM :SLUICE_SCHEMA.release_slots(array_agg(r.c ORDER BY r.c), array_agg(1))
  FROM jsonb_to_recordset(p_ended) AS r(c text)
  WHERE r.c IS NOT NULL
  HAVING count(*) > 0;

  WITH counts AS (
    SELECT b AS id, count(*) FILTER (WHERE ok)::integer AS ok, count(*) FILTER (WHERE NOT ok)::integer AS ko
    FROM jsonb_to_recordset(p_ended) AS r(b bigint, ok boolean)
    WHERE b IS NOT NULL
    GROUP BY b
  ), counted AS (
    UPDATE :SLUICE_SCHEMA.batches x
    SET completed = x.completed + counts.ok, discarded = x.discarded + counts.ko,
        finished_at = CASE WHEN x.sealed AND x.completed + counts.ok + x.discarded + counts.ko >= x.total
                           THEN now() END
    FROM counts
    WHERE x.id = counts.id AND x.finished_at IS NULL
    RETURNING x.id, x.finished_at
  )
  SELECT array_agg(id) INTO v_finished FROM counted WHERE finished_at IS NOT NULL;
  PERFORM :SLUICE_SCHEMA.fire_batch_callbacks(v_finished);
END
$fn$;

-- Dead-letters jobs whose last attempt never settled: the lease ran out with no attempts left,
-- typically because the handler crashed or timed out the function every time.
CREATE FUNCTION :SLUICE_SCHEMA.bury_exhausted(p_limit integer)
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
                                             last_error, errors)
    SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
           jsonb_path_query_array(errors || jsonb_build_array(e), '$[last - 9 to last]')
    FROM dead
    ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
      errors = excluded.errors
    RETURNING 1
  ), stats AS (
    INSERT INTO :SLUICE_SCHEMA.job_stats (name, queue, status) SELECT name, queue, 'dead' FROM dead RETURNING 1
  )
  SELECT count(*)::integer,
         coalesce(jsonb_agg(jsonb_build_object('id', id, 'c', concurrency_key, 'u', coalesce(unique_key, exclusive_key),
                                               'b', batch_id, 'ok', false))
                  FILTER (WHERE concurrency_key IS NOT NULL OR unique_key IS NOT NULL OR exclusive_key IS NOT NULL
                                OR batch_id IS NOT NULL), '[]')
  INTO v_n, v_ended
  FROM dead;
  PERFORM :SLUICE_SCHEMA.after_end(v_ended);
  RETURN v_n;
END
$fn$;

-- Semaphores past their TTL are recounted from the jobs that really hold a slot (a lost release
-- cannot leak a slot for good), then refilled from the blocked jobs.
CREATE FUNCTION :SLUICE_SCHEMA.reconcile_semaphores(p_limit integer)
RETURNS integer LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_keys text[];
BEGIN
  SELECT array_agg(key ORDER BY key) INTO v_keys
  FROM (SELECT key FROM :SLUICE_SCHEMA.semaphores WHERE expires_at < now() ORDER BY key LIMIT p_limit) s;
  IF v_keys IS NULL THEN
    RETURN 0;
  END IF;
  PERFORM 1 FROM :SLUICE_SCHEMA.semaphores WHERE key = ANY (v_keys) ORDER BY key FOR UPDATE;
  UPDATE :SLUICE_SCHEMA.semaphores s
  SET value = (SELECT count(*) FROM :SLUICE_SCHEMA.jobs j WHERE j.concurrency_key = s.key),
      expires_at = now() + s.ttl_ms * interval '1 millisecond'
  WHERE s.key = ANY (v_keys);
  PERFORM :SLUICE_SCHEMA.promote_free(v_keys);
  -- Keys with nothing held and nothing blocked are removed.
  DELETE FROM :SLUICE_SCHEMA.semaphores s
  WHERE s.key = ANY (v_keys) AND s.value = 0
    AND NOT EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.blocked b WHERE b.concurrency_key = s.key);
  RETURN cardinality(v_keys);
END
$fn$;

-- Enqueues jobs that use controls, in one call: takes until-executed locks, takes concurrency
-- slots (or blocks, discards, or raises), counts batch members. Rows are taken in concurrency
-- key order (input order within a key), the order settle locks semaphores in.
-- Conflicts that must reject raise SQLSTATE SLU09; a closed batch raises SLU00.
CREATE FUNCTION :SLUICE_SCHEMA.enqueue_controlled(p_rows jsonb)
RETURNS TABLE (ord bigint, id text, status text, existing_id text)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  r record;
  v_id bigint;
  v_got bigint;
  v_slot integer;
  v_existing bigint;
  v_batches jsonb := '{}';
  v_open boolean;
  v_batch text;
BEGIN
  FOR r IN
    SELECT x.*, x.o AS ordinal
    FROM ROWS FROM (jsonb_to_recordset(p_rows) AS (
      q text, n text, p jsonb, pr smallint, m integer, r timestamptz, d bigint,
      ck text, cl integer, ct bigint, cc text, uk text, us text, uc text, ut bigint, b bigint,
      i bigint, e jsonb, ea timestamptz))
      WITH ORDINALITY AS x(q, n, p, pr, m, r, d, ck, cl, ct, cc, uk, us, uc, ut, b, i, e, ea, o)
    ORDER BY x.ck NULLS FIRST, x.o
  LOOP
    -- A replayed dead letter keeps its id; everything else gets a new one.
    v_id := coalesce(r.i, nextval(pg_get_serial_sequence(':SLUICE_SCHEMA.jobs', 'id')));

    IF r.uk IS NOT NULL AND r.us = 'until-executed' THEN
      v_got := NULL;
      INSERT INTO :SLUICE_SCHEMA.unique_locks AS u (key, job_id, strategy, state, expires_at)
      VALUES (r.uk, v_id, 'until-executed', 'queued', now() + r.ut * interval '1 millisecond')
      ON CONFLICT ON CONSTRAINT unique_locks_pkey DO UPDATE
      SET job_id = excluded.job_id, strategy = excluded.strategy, state = 'queued', owner = NULL,
          acquired_at = now(), expires_at = excluded.expires_at
      WHERE u.expires_at < now()
      RETURNING u.job_id INTO v_got;
      IF v_got IS NULL THEN
        SELECT u.job_id INTO v_existing FROM :SLUICE_SCHEMA.unique_locks u WHERE u.key = r.uk;
        IF r.uc = 'reject' THEN
          RAISE EXCEPTION 'A job with unique key "%" is already queued or running (job %)', r.uk, v_existing
            USING ERRCODE = 'SLU09', DETAIL = r.uk;
        END IF;
        ord := r.ordinal; id := NULL; status := 'duplicate'; existing_id := v_existing::text;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;

    IF r.ck IS NOT NULL THEN
      v_slot := NULL;
      INSERT INTO :SLUICE_SCHEMA.semaphores AS s (key, value, lim, ttl_ms, expires_at)
      VALUES (r.ck, 1, r.cl, r.ct, now() + r.ct * interval '1 millisecond')
      ON CONFLICT ON CONSTRAINT semaphores_pkey DO UPDATE
      SET value = s.value + 1, lim = excluded.lim, ttl_ms = excluded.ttl_ms, expires_at = excluded.expires_at
      WHERE s.value < excluded.lim
      RETURNING s.value INTO v_slot;
      IF v_slot IS NULL THEN
        IF r.cc = 'raise' THEN
          RAISE EXCEPTION 'Concurrency limit % reached for key "%"', r.cl, r.ck USING ERRCODE = 'SLU09', DETAIL = r.ck;
        ELSIF r.cc = 'discard' THEN
          DELETE FROM :SLUICE_SCHEMA.unique_locks u WHERE u.key = r.uk AND u.job_id = v_id;
          ord := r.ordinal; id := NULL; status := 'discarded'; existing_id := NULL;
          RETURN NEXT;
          CONTINUE;
        END IF;
        INSERT INTO :SLUICE_SCHEMA.blocked (id, concurrency_key, queue, name, payload, priority, max_attempts, run_at,
                                            unique_key, exclusive_key, batch_id)
        VALUES (v_id, r.ck, r.q, r.n, r.p, r.pr, r.m, coalesce(r.r, now() + r.d * interval '1 millisecond'),
                CASE WHEN r.us = 'until-executed' THEN r.uk END, CASE WHEN r.us = 'while-executing' THEN r.uk END, r.b);
        status := 'blocked';
      ELSE
        status := 'enqueued';
      END IF;
    ELSE
      status := 'enqueued';
    END IF;

    IF status = 'enqueued' THEN
      INSERT INTO :SLUICE_SCHEMA.jobs (id, queue, name, payload, priority, max_attempts, run_at,
                                       concurrency_key, unique_key, exclusive_key, batch_id, enqueued_at, errors)
      VALUES (v_id, r.q, r.n, r.p, r.pr, r.m, coalesce(r.r, now() + r.d * interval '1 millisecond'),
              r.ck, CASE WHEN r.us = 'until-executed' THEN r.uk END, CASE WHEN r.us = 'while-executing' THEN r.uk END, r.b,
              coalesce(r.ea, now()), coalesce(r.e, '[]'));
    END IF;
    IF r.b IS NOT NULL THEN
      v_batch := r.b::text;
      v_batches := jsonb_set(v_batches, ARRAY[v_batch], to_jsonb(coalesce((v_batches->>v_batch)::integer, 0) + 1));
    END IF;
    ord := r.ordinal; id := v_id::text; existing_id := NULL;
    RETURN NEXT;
  END LOOP;

  FOR v_batch IN SELECT jsonb_object_keys(v_batches) LOOP
    UPDATE :SLUICE_SCHEMA.batches x SET total = x.total + (v_batches->>v_batch)::integer
    WHERE x.id = v_batch::bigint AND NOT x.sealed
    RETURNING true INTO v_open;
    IF v_open IS NULL THEN
      RAISE EXCEPTION 'Batch % does not exist or is already sealed', v_batch USING ERRCODE = 'SLU00';
    END IF;
    v_open := NULL;
  END LOOP;
END
$fn$;

-- Seals a batch: no more jobs join it. A batch whose jobs are all done already finishes here,
-- and its callbacks are enqueued now.
CREATE FUNCTION :SLUICE_SCHEMA.seal_batch(p_batch bigint)
RETURNS TABLE (total integer, finished boolean)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  b :SLUICE_SCHEMA.batches;
BEGIN
  UPDATE :SLUICE_SCHEMA.batches x
  SET sealed = true, finished_at = CASE WHEN x.completed + x.discarded >= x.total THEN now() END
  WHERE x.id = p_batch AND NOT x.sealed
  RETURNING x.* INTO b;
  IF b.id IS NULL THEN
    RAISE EXCEPTION 'Batch % does not exist or is already sealed', p_batch USING ERRCODE = 'SLU00';
  END IF;
  IF b.finished_at IS NOT NULL THEN
    PERFORM :SLUICE_SCHEMA.fire_batch_callbacks(ARRAY[b.id]);
  END IF;
  RETURN QUERY SELECT b.total, b.finished_at IS NOT NULL;
END
$fn$;

-- Puts dead letters back in their queue through the same enqueue as new jobs (rows as for
-- enqueue_controlled, with `i` the dead letter's id), so a concurrency limit or a uniqueness
-- lock applies to the replay too. A dead letter whose unique key is held by another job stays
-- where it is; the others keep their id, their original enqueue time and their error history.
CREATE FUNCTION :SLUICE_SCHEMA.requeue_dead_letters(p_rows jsonb)
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
    IF r->>'us' = 'until-executed' AND EXISTS (
      SELECT 1 FROM :SLUICE_SCHEMA.unique_locks u
      WHERE u.key = r->>'uk' AND u.job_id <> (r->>'i')::bigint AND u.expires_at >= now()
    ) THEN
      CONTINUE;
    END IF;
    DELETE FROM :SLUICE_SCHEMA.dead_letters d WHERE d.id = (r->>'i')::bigint RETURNING d.* INTO v_dead;
    IF v_dead.id IS NULL THEN
      CONTINUE;
    END IF;
    RETURN QUERY
    SELECT e.id, e.status
    FROM :SLUICE_SCHEMA.enqueue_controlled(jsonb_build_array(
      r || jsonb_build_object('e', v_dead.errors, 'ea', v_dead.enqueued_at, 'uc', 'discard'))) e;
    v_dead := NULL;
  END LOOP;
END
$fn$;
