-- Deletes waiting jobs (the operator's cancel, bulk cancel and purge): jobs of the jobs table that
-- no drain holds and blocked jobs, but none in a batch (the batch would never finish). What
-- refers to a deleted job goes with it: its uniqueness lock, and the concurrency slot a job of
-- the jobs table holds, given back and refilled from the blocked jobs as when a job finishes.
-- Each step reads what the previous one deleted, hence plpgsql. Returns the ids deleted.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.cancel_waiting(p_ids bigint[])
RETURNS bigint[] LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  v_ids bigint[];
  v_blocked bigint[];
  v_keys text[];
  v_counts integer[];
BEGIN
  WITH gone AS (
    DELETE FROM :SLUICE_SCHEMA.blocked b
    WHERE b.id = ANY (p_ids) AND b.batch_id IS NULL
    RETURNING b.id
  )
  SELECT coalesce(array_agg(id), '{}') INTO v_blocked FROM gone;

  WITH gone AS (
    DELETE FROM :SLUICE_SCHEMA.jobs j
    WHERE j.id = ANY (p_ids) AND j.lease_token IS NULL AND j.batch_id IS NULL
    RETURNING j.id, j.concurrency_key
  ), per_key AS (
    SELECT concurrency_key AS k, count(*)::integer AS n FROM gone WHERE concurrency_key IS NOT NULL GROUP BY 1
  )
  SELECT coalesce((SELECT array_agg(id) FROM gone), '{}'),
         (SELECT array_agg(k ORDER BY k) FROM per_key), (SELECT array_agg(n ORDER BY k) FROM per_key)
  INTO v_ids, v_keys, v_counts;

  v_ids := v_ids || v_blocked;
  DELETE FROM :SLUICE_SCHEMA.unique_locks u WHERE u.job_id = ANY (v_ids);
  PERFORM :SLUICE_SCHEMA.release_slots(v_keys, v_counts);
  RETURN v_ids;
END
$fn$;
