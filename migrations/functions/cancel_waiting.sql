-- Deletes waiting jobs (the operator's cancel, bulk cancel and purge): jobs of the jobs table that
-- no drain holds and blocked jobs, but none in a batch (the batch would never finish). What
-- refers to a deleted job goes with it: its uniqueness lock, and the concurrency slot a job of
-- the jobs table holds, given back and refilled from the blocked jobs as when a job finishes.
-- A cancelled job's steps go with it. A cancelled job that a parent invoked resolves the parent's
-- step as failed (the parent's ctx.invoke throws). A cancelled job's own invoked children that
-- still wait are cancelled too when p_children is 'cancel' (the default), or left to run with
-- 'keep' (their ends then resolve nothing).
-- Each step reads what the previous one deleted, hence plpgsql. Returns the ids deleted.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.cancel_waiting(bigint[]);

CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.cancel_waiting(p_ids bigint[], p_children text DEFAULT 'cancel')
RETURNS bigint[] LANGUAGE plpgsql
SET jit = off
AS $fn$
DECLARE
  v_ids bigint[];
  v_blocked bigint[];
  v_keys text[];
  v_counts integer[];
  v_ended jsonb;
  v_children bigint[];
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
    RETURNING j.id, j.concurrency_key, j.parent_id
  ), per_key AS (
    SELECT concurrency_key AS k, count(*)::integer AS n FROM gone WHERE concurrency_key IS NOT NULL GROUP BY 1
  )
  SELECT coalesce((SELECT array_agg(id) FROM gone), '{}'),
         (SELECT array_agg(k ORDER BY k) FROM per_key), (SELECT array_agg(n ORDER BY k) FROM per_key),
         (SELECT jsonb_agg(:SLUICE_SCHEMA.child_end(id, parent_id, false, NULL,
                   jsonb_build_object('name', 'JobCancelledError', 'message', 'The job was cancelled', 'at', now())))
          FROM gone WHERE parent_id IS NOT NULL)
  INTO v_ids, v_keys, v_counts, v_ended;

  v_ids := v_ids || v_blocked;
  DELETE FROM :SLUICE_SCHEMA.unique_locks u WHERE u.job_id = ANY (v_ids);
  PERFORM :SLUICE_SCHEMA.release_slots(v_keys, v_counts);
  IF v_ended IS NOT NULL THEN
    PERFORM :SLUICE_SCHEMA.steps_children_ended(v_ended);
  END IF;
  WITH steps AS (
    DELETE FROM :SLUICE_SCHEMA.job_steps s WHERE s.job_id = ANY (v_ids)
    RETURNING s.child_id, s.state
  )
  SELECT array_agg(child_id) INTO v_children FROM steps WHERE child_id IS NOT NULL AND state = 'waiting';
  IF v_children IS NOT NULL AND p_children = 'cancel' THEN
    v_ids := v_ids || :SLUICE_SCHEMA.cancel_waiting(v_children, p_children);
  END IF;
  RETURN v_ids;
END
$fn$;
