-- Small pieces that several functions share.

-- A job's error history after one more error: the last ten, oldest first.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.error_history(p_errors jsonb, p_error jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT jsonb_path_query_array(p_errors || jsonb_build_array(p_error), '$[last - 9 to last]')
$fn$;

-- What after_end needs to know of a job that ended (completed, expired or dead-lettered): its
-- concurrency key, its uniqueness key, its batch and whether it succeeded; null when the job has
-- none of them, so that callers aggregate only the jobs with something to release.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.ended_job(
  p_id bigint, p_concurrency_key text, p_unique_key text, p_exclusive_key text, p_batch_id bigint, p_ok boolean
)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT CASE WHEN p_concurrency_key IS NOT NULL OR p_unique_key IS NOT NULL OR p_exclusive_key IS NOT NULL
                   OR p_batch_id IS NOT NULL
              THEN jsonb_build_object('id', p_id, 'c', p_concurrency_key, 'u', coalesce(p_unique_key, p_exclusive_key),
                                      'b', p_batch_id, 'ok', p_ok)
         END
$fn$;
