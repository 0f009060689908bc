-- Small pieces that several functions share.

-- A job's error history after one more error: the last ten, oldest first.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.error_history(p_errors jsonb, p_error jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_path_query_array(p_errors || jsonb_build_array(p_error), '$[last - 9 to last]')
$fn$;

-- What after_end needs to know of a job that ended (completed, expired or dead-lettered): its
-- concurrency key, the key of its uniqueness lock (until-executed or while-executing), its batch
-- and whether it succeeded, keyed by those columns' names (decoded by ended_job_records); null
-- when the job has none of them, so that callers aggregate only the jobs with something to release.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.ended_job(
  p_id bigint, p_concurrency_key text, p_unique_key text, p_exclusive_key text, p_batch_id bigint, p_ok boolean
)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_concurrency_key IS NOT NULL OR p_unique_key IS NOT NULL OR p_exclusive_key IS NOT NULL
                   OR p_batch_id IS NOT NULL
              THEN jsonb_build_object('job_id', p_id, 'concurrency_key', p_concurrency_key,
                                      'lock_key', coalesce(p_unique_key, p_exclusive_key), 'batch_id', p_batch_id,
                                      'succeeded', p_ok)
         END
$fn$;

-- The ended jobs after_end is sent: a JSON array of ended_job's records.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.ended_job_records(p_ended jsonb)
RETURNS TABLE (job_id bigint, concurrency_key text, lock_key text, batch_id bigint, succeeded boolean)
LANGUAGE sql STABLE
AS $fn$
  SELECT e.job_id, e.concurrency_key, e.lock_key, e.batch_id, e.succeeded
  FROM jsonb_to_recordset(p_ended) AS e(
    job_id bigint, concurrency_key text, lock_key text, batch_id bigint, succeeded boolean
  )
$fn$;

-- What steps_children_ended needs to know of a job that a parent's ctx.invoke enqueued and that
-- ended: the parent, whether it completed, and its result or its last error (steps.sql).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.child_end(
  p_id bigint, p_parent_id bigint, p_ok boolean, p_result jsonb, p_error jsonb
)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_build_object('child_id', p_id, 'parent_id', p_parent_id, 'ok', p_ok, 'result', p_result,
                            'error', p_error)
$fn$;
