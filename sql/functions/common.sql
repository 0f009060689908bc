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

-- A settle's failed attempts, as sent by the drain (src/sql/settle.ts): job id and lease token,
-- the error, the backoff before the next attempt, whether to dead-letter now, the time a
-- single-consumer job keeps its place until, how long the run took and how long it waited.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.settle_failures(p_ko jsonb)
RETURNS TABLE (
  id bigint, token uuid, error jsonb, delay_ms bigint, final boolean, keep_place timestamptz, duration_ms bigint,
  wait_ms bigint
)
LANGUAGE sql STABLE
AS $fn$
  SELECT a.i, a.t, a.e || jsonb_build_object('at', now()), a.d, a.f, a.r, a.du, a.w
  FROM jsonb_to_recordset(p_ko) AS a(i bigint, t uuid, e jsonb, d bigint, f boolean, r timestamptz, du bigint, w bigint)
$fn$;
