-- Enqueues the callbacks of batches that just finished, with the batch properties as input.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.fire_batch_callbacks(p_batches bigint[])
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

-- Seals a batch: no more jobs join it. A batch whose jobs are all done already finishes here,
-- and its callbacks are enqueued now.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.seal_batch(p_batch bigint)
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

