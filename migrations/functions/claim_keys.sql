-- Stage 5: while-executing keys. A picked job runs only if it takes its key's lock (free, expired
-- or its own); the first picked job of a key, in claim order, gets the chance. The lock's INSERT
-- waits for a concurrent claim of the same key to commit, so two drains never both take it.
-- Returns the picked jobs that must be dropped.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_take_keys(
  p_ids bigint[], p_keys text[], p_invocation text, p_until timestamptz
)
RETURNS bigint[] LANGUAGE sql
AS $fn$
  WITH want AS (
    SELECT DISTINCT ON (k) id, k
    FROM unnest(p_ids, p_keys) WITH ORDINALITY AS w(id, k, o)
    WHERE k IS NOT NULL
    ORDER BY k, o
  ), got AS (
    INSERT INTO :SLUICE_SCHEMA.unique_locks AS u (key, job_id, strategy, state, owner, expires_at)
    SELECT k, id, 'while-executing', 'executing', p_invocation, p_until FROM want
    ON CONFLICT ON CONSTRAINT unique_locks_pkey DO UPDATE
    SET job_id = excluded.job_id, owner = excluded.owner, expires_at = excluded.expires_at, acquired_at = now(),
        state = 'executing', strategy = 'while-executing'
    WHERE u.expires_at < now() OR u.job_id = excluded.job_id
    RETURNING u.job_id
  )
  SELECT coalesce(array_agg(w.id), '{}')
  FROM unnest(p_ids, p_keys) AS w(id, k)
  WHERE w.k IS NOT NULL AND w.id NOT IN (SELECT job_id FROM got)
$fn$;
