-- Enqueues jobs that use controls, in one call: takes until-executed locks, takes concurrency
-- slots (or blocks, discards, or raises), counts batch members. Rows are taken in concurrency
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

