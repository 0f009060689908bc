-- The jobs enqueue_controlled is sent (src/sql/enqueue.ts encodeControlled): a JSON array of
-- objects keyed by the names of the columns they fill (jobs, and the concurrency and unique
-- controls' settings). run_at null means delay_ms after now(); id is set for a replayed dead
-- letter, which also brings its errors and enqueued_at (requeue_dead_letters). ord is each
-- job's position in the array. A job under an admission policy names it and its partition, with
-- the gates' settings (computed from its input at enqueue; the last enqueue's win). trace_context
-- is the W3C trace context of the traced enqueue that wrote the job (absent when none).
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.enqueue_controlled_records(jsonb);

CREATE FUNCTION :SLUICE_SCHEMA.enqueue_controlled_records(p_rows jsonb)
RETURNS TABLE (
  queue text, name text, payload jsonb, priority smallint, max_attempts integer, run_at timestamptz, delay_ms bigint,
  concurrency_key text, concurrency_limit integer, concurrency_ttl_ms bigint, concurrency_on_conflict text,
  unique_key text, unique_strategy text, unique_on_conflict text, unique_ttl_ms bigint, batch_id bigint, id bigint,
  errors jsonb, enqueued_at timestamptz, policy text, partition_key text, global_max integer,
  rate double precision, per_ms bigint, burst double precision, max_in_flight integer, quantum integer,
  adaptive_min integer, adaptive_max integer, adaptive_initial integer, target_lag_ms integer, trace_context text,
  ord bigint
)
LANGUAGE sql STABLE
AS $fn$
  SELECT x.queue, x.name, x.payload, x.priority, x.max_attempts, x.run_at, x.delay_ms, x.concurrency_key,
         x.concurrency_limit, x.concurrency_ttl_ms, x.concurrency_on_conflict, x.unique_key, x.unique_strategy,
         x.unique_on_conflict, x.unique_ttl_ms, x.batch_id, x.id, x.errors, x.enqueued_at, x.policy, x.partition_key,
         x.global_max, x.rate, x.per_ms, x.burst, x.max_in_flight, x.quantum, x.adaptive_min, x.adaptive_max,
         x.adaptive_initial, x.target_lag_ms, x.trace_context, x.ord
  FROM ROWS FROM (jsonb_to_recordset(p_rows) AS (
    queue text, name text, payload jsonb, priority smallint, max_attempts integer, run_at timestamptz, delay_ms bigint,
    concurrency_key text, concurrency_limit integer, concurrency_ttl_ms bigint, concurrency_on_conflict text,
    unique_key text, unique_strategy text, unique_on_conflict text, unique_ttl_ms bigint, batch_id bigint, id bigint,
    errors jsonb, enqueued_at timestamptz, policy text, partition_key text, global_max integer,
    rate double precision, per_ms bigint, burst double precision, max_in_flight integer, quantum integer,
    adaptive_min integer, adaptive_max integer, adaptive_initial integer, target_lag_ms integer, trace_context text
  )) WITH ORDINALITY AS x(
    queue, name, payload, priority, max_attempts, run_at, delay_ms, concurrency_key, concurrency_limit,
    concurrency_ttl_ms, concurrency_on_conflict, unique_key, unique_strategy, unique_on_conflict, unique_ttl_ms,
    batch_id, id, errors, enqueued_at, policy, partition_key, global_max, rate, per_ms, burst, max_in_flight, quantum,
    adaptive_min, adaptive_max, adaptive_initial, target_lag_ms, trace_context, ord
  )
$fn$;

-- The policies and partitions of the jobs being enqueued, once each: the policy's queue and
-- global cap, the partition's settings (the last row's), a full bucket for a new partition, and
-- the time of this enqueue.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.admission_enqueued(p_rows jsonb)
RETURNS integer LANGUAGE sql
AS $fn$
  WITH r AS (
    SELECT * FROM :SLUICE_SCHEMA.enqueue_controlled_records(p_rows) WHERE policy IS NOT NULL
  ), pol AS (
    INSERT INTO :SLUICE_SCHEMA.policies AS g (name, queue, global_max)
    SELECT DISTINCT ON (r.policy) r.policy, r.queue, r.global_max FROM r ORDER BY r.policy, r.ord DESC
    ON CONFLICT (name) DO UPDATE SET queue = excluded.queue, global_max = excluded.global_max, updated_at = now()
    WHERE (g.queue, g.global_max) IS DISTINCT FROM (excluded.queue, excluded.global_max)
    RETURNING 1
  ), part AS (
    INSERT INTO :SLUICE_SCHEMA.partitions AS p (policy, partition_key, queue, rate, per_ms, burst, tokens, refilled_at,
      max_in_flight, quantum, adaptive_min, adaptive_max, target_lag_ms, adaptive_cap, last_enqueued_at)
    SELECT DISTINCT ON (r.policy, r.partition_key) r.policy, r.partition_key, r.queue, r.rate, r.per_ms, r.burst,
           r.burst, CASE WHEN r.rate IS NOT NULL THEN now() END, r.max_in_flight, r.quantum, r.adaptive_min,
           r.adaptive_max, r.target_lag_ms, r.adaptive_initial, now()
    FROM r ORDER BY r.policy, r.partition_key, r.ord DESC
    ON CONFLICT ON CONSTRAINT partitions_pkey DO UPDATE
    SET queue = excluded.queue, rate = excluded.rate, per_ms = excluded.per_ms, burst = excluded.burst,
        -- A bucket keeps its tokens (at most the new burst); a new throttle starts full.
        tokens = CASE WHEN excluded.rate IS NULL THEN NULL
                      WHEN p.rate IS NULL THEN excluded.burst ELSE least(p.tokens, excluded.burst) END,
        refilled_at = CASE WHEN excluded.rate IS NULL THEN NULL ELSE coalesce(p.refilled_at, now()) END,
        max_in_flight = excluded.max_in_flight, quantum = excluded.quantum, adaptive_min = excluded.adaptive_min,
        adaptive_max = excluded.adaptive_max, target_lag_ms = excluded.target_lag_ms,
        adaptive_cap = CASE WHEN excluded.adaptive_min IS NULL THEN NULL
                            ELSE greatest(excluded.adaptive_min, least(excluded.adaptive_max,
                                   coalesce(p.adaptive_cap, excluded.adaptive_cap))) END,
        last_enqueued_at = now()
    RETURNING 1
  )
  SELECT (SELECT count(*)::integer FROM pol) + (SELECT count(*)::integer FROM part)
$fn$;

-- Enqueues jobs that use controls, in one call: takes until-executed locks, takes concurrency
-- slots (or blocks, discards, or raises), counts batch members. p_rows is decoded by
-- enqueue_controlled_records. Rows are taken in concurrency
-- key order (input order within a key), the order settle locks semaphores in.
-- Conflicts that must reject raise SQLSTATE SLU09; a closed batch raises SLU00.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.enqueue_controlled(p_rows jsonb)
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
  IF p_rows @? '$[*] ? (@.policy != null)' THEN
    PERFORM :SLUICE_SCHEMA.admission_enqueued(p_rows);
  END IF;

  FOR r IN
    SELECT x.*, x.ord AS ordinal
    FROM :SLUICE_SCHEMA.enqueue_controlled_records(p_rows) x
    ORDER BY x.concurrency_key NULLS FIRST, x.ord
  LOOP
    -- A replayed dead letter keeps its id; everything else gets a new one.
    v_id := coalesce(r.id, nextval(pg_get_serial_sequence(':SLUICE_SCHEMA.jobs', 'id')));

    IF r.unique_key IS NOT NULL AND r.unique_strategy = 'until-executed' THEN
      v_got := NULL;
      INSERT INTO :SLUICE_SCHEMA.unique_locks AS u (key, job_id, strategy, state, expires_at)
      VALUES (r.unique_key, v_id, 'until-executed', 'queued', now() + r.unique_ttl_ms * interval '1 millisecond')
      ON CONFLICT ON CONSTRAINT unique_locks_pkey DO UPDATE
      SET job_id = excluded.job_id, strategy = excluded.strategy, state = 'queued', owner = NULL,
          acquired_at = now(), expires_at = excluded.expires_at
      WHERE u.expires_at < now()
      RETURNING u.job_id INTO v_got;
      IF v_got IS NULL THEN
        SELECT u.job_id INTO v_existing FROM :SLUICE_SCHEMA.unique_locks u WHERE u.key = r.unique_key;
        IF r.unique_on_conflict = 'reject' THEN
          RAISE EXCEPTION 'A job with unique key "%" is already queued or running (job %)', r.unique_key, v_existing
            USING ERRCODE = 'SLU09', DETAIL = r.unique_key;
        END IF;
        ord := r.ordinal; id := NULL; status := 'duplicate'; existing_id := v_existing::text;
        RETURN NEXT;
        CONTINUE;
      END IF;
    END IF;

    IF r.concurrency_key IS NOT NULL THEN
      v_slot := NULL;
      INSERT INTO :SLUICE_SCHEMA.semaphores AS s (key, value, lim, ttl_ms, expires_at)
      VALUES (r.concurrency_key, 1, r.concurrency_limit, r.concurrency_ttl_ms,
              now() + r.concurrency_ttl_ms * interval '1 millisecond')
      ON CONFLICT ON CONSTRAINT semaphores_pkey DO UPDATE
      SET value = s.value + 1, lim = excluded.lim, ttl_ms = excluded.ttl_ms, expires_at = excluded.expires_at
      WHERE s.value < excluded.lim
      RETURNING s.value INTO v_slot;
      IF v_slot IS NULL THEN
        IF r.concurrency_on_conflict = 'raise' THEN
          RAISE EXCEPTION 'Concurrency limit % reached for key "%"', r.concurrency_limit, r.concurrency_key
            USING ERRCODE = 'SLU09', DETAIL = r.concurrency_key;
        ELSIF r.concurrency_on_conflict = 'discard' THEN
          DELETE FROM :SLUICE_SCHEMA.unique_locks u WHERE u.key = r.unique_key AND u.job_id = v_id;
          ord := r.ordinal; id := NULL; status := 'discarded'; existing_id := NULL;
          RETURN NEXT;
          CONTINUE;
        END IF;
        INSERT INTO :SLUICE_SCHEMA.blocked (id, concurrency_key, queue, name, payload, priority, max_attempts, run_at,
                                            unique_key, exclusive_key, batch_id, trace_context)
        VALUES (v_id, r.concurrency_key, r.queue, r.name, r.payload, r.priority, r.max_attempts,
                coalesce(r.run_at, now() + r.delay_ms * interval '1 millisecond'),
                CASE WHEN r.unique_strategy = 'until-executed' THEN r.unique_key END,
                CASE WHEN r.unique_strategy = 'while-executing' THEN r.unique_key END, r.batch_id,
                r.trace_context);
        status := 'blocked';
      ELSE
        status := 'enqueued';
      END IF;
    ELSE
      status := 'enqueued';
    END IF;

    IF status = 'enqueued' THEN
      INSERT INTO :SLUICE_SCHEMA.jobs (id, queue, name, payload, priority, max_attempts, run_at,
                                       concurrency_key, unique_key, exclusive_key, batch_id, enqueued_at, errors,
                                       policy, partition_key, trace_context)
      VALUES (v_id, r.queue, r.name, r.payload, r.priority, r.max_attempts,
              coalesce(r.run_at, now() + r.delay_ms * interval '1 millisecond'), r.concurrency_key,
              CASE WHEN r.unique_strategy = 'until-executed' THEN r.unique_key END,
              CASE WHEN r.unique_strategy = 'while-executing' THEN r.unique_key END, r.batch_id,
              coalesce(r.enqueued_at, now()), coalesce(r.errors, '[]'), r.policy, r.partition_key, r.trace_context);
    END IF;
    IF r.batch_id IS NOT NULL THEN
      v_batch := r.batch_id::text;
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

