-- Invoked jobs (ctx.invoke, docs/steps.md): a child's end resolves its parent's step. The child and
-- its step are written by the invoke statement (src/sql/steps.ts invokeChild).

-- It returned nothing before it named the queues of the parents it made due.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.steps_children_ended(jsonb);

-- Jobs a parent invoked (ctx.invoke) that ended: each resolves its step in the parent (completed
-- with the child's result, or failed with its last error) and the parent is woken once its last
-- open wait resolves. p_children holds child_end's records (common.sql). Returns the queues of
-- the parents it made due (null when none), for the settle to pass on: their drains may need a
-- wake-up.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.steps_children_ended(p_children jsonb)
RETURNS text[]
LANGUAGE plpgsql
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_jobs bigint[];
  v_queues text[];
BEGIN
  WITH r AS (
    SELECT c.child_id, c.parent_id, c.ok, c.result, c.error
    FROM jsonb_to_recordset(p_children) AS c(child_id bigint, parent_id bigint, ok boolean, result jsonb, error jsonb)
  ), resolved AS (
    UPDATE :SLUICE_SCHEMA.job_steps s
    SET state = CASE WHEN r.ok THEN 'completed' ELSE 'failed' END, result = r.result, error = r.error,
        finished_at = now()
    FROM r
    WHERE s.job_id = r.parent_id AND s.child_id = r.child_id AND s.kind = 'invoke' AND s.state = 'waiting'
    RETURNING s.job_id
  )
  SELECT array_agg(job_id) INTO v_jobs FROM resolved;
  IF v_jobs IS NOT NULL THEN
    SELECT array_agg(r.queue ORDER BY r.queue) INTO v_queues FROM :SLUICE_SCHEMA.steps_resolved(v_jobs) r;
  END IF;
  RETURN v_queues;
END
$fn$;
