-- What follows a job's end (completed, expired or dead-lettered), for the jobs described in
-- p_ended ([{ id, c: concurrency key, u: unique key, b: batch id, ok }]): its uniqueness lock
-- goes, its concurrency slot is given back (and refilled), its batch is counted; a batch that
-- this completes gets its callbacks enqueued, exactly once (the batch row lock orders concurrent
-- callers; only the one that completes the count sees it finish).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.after_end(p_ended jsonb)
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

