-- Fills the free slots of the given keys with blocked jobs, most urgent and oldest first; the
-- promoted jobs keep their id and take the slot. Locks the semaphore rows first, in key order
-- (the order every writer uses), so a concurrent enqueue either sees the slot taken or has its
-- blocked job visible here.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.promote_free(p_keys text[])
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
                                     concurrency_key, unique_key, exclusive_key, batch_id, trace_context)
    SELECT id, queue, name, payload, priority, max_attempts, greatest(run_at, now()), enqueued_at,
           concurrency_key, unique_key, exclusive_key, batch_id, trace_context
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
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.release_slots(p_keys text[], p_counts integer[])
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

-- Semaphores past their TTL are recounted from the jobs that really hold a slot (a lost release
-- cannot leak a slot for good), then refilled from the blocked jobs.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.reconcile_semaphores(p_limit integer)
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

