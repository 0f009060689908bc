-- What follows a job's end (completed, expired or dead-lettered), for the jobs described in
-- p_ended (ended_job's records, common.sql): its uniqueness lock
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
  USING :SLUICE_SCHEMA.ended_job_records(p_ended) r
  WHERE r.lock_key IS NOT NULL AND u.key = r.lock_key AND u.job_id = r.job_id;

  PERFORM :SLUICE_SCHEMA.release_slots(array_agg(r.concurrency_key ORDER BY r.concurrency_key), array_agg(1))
  FROM :SLUICE_SCHEMA.ended_job_records(p_ended) r
  WHERE r.concurrency_key IS NOT NULL
  HAVING count(*) > 0;

  WITH counts AS (
    SELECT r.batch_id AS id, count(*) FILTER (WHERE r.succeeded)::integer AS ok,
           count(*) FILTER (WHERE NOT r.succeeded)::integer AS ko
    FROM :SLUICE_SCHEMA.ended_job_records(p_ended) r
    WHERE r.batch_id IS NOT NULL
    GROUP BY r.batch_id
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

