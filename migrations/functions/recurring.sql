-- Enqueues the given slots ([{ task, slot, row }], row as for enqueue_controlled): the
-- (task, slot) primary key lets exactly one caller have each slot, however many maintenance
-- runs overlap; the won slots' jobs go through the same enqueue as any other job.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.enqueue_recurring(p_slots jsonb)
RETURNS TABLE (task text, slot timestamptz, job_id text, status text)
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
#variable_conflict use_column
DECLARE
  v_won jsonb;
BEGIN
  WITH s AS (
    SELECT x.task, x.slot, x.row, x.o
    FROM ROWS FROM (jsonb_to_recordset(p_slots) AS (task text, slot timestamptz, row jsonb)) WITH ORDINALITY AS x(task, slot, row, o)
  ), won AS (
    INSERT INTO :SLUICE_SCHEMA.recurring_runs (task, slot)
    SELECT s.task, s.slot FROM s
    ON CONFLICT DO NOTHING
    RETURNING recurring_runs.task, recurring_runs.slot
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('task', s.task, 'slot', s.slot, 'row', s.row) ORDER BY s.o), '[]')
  INTO v_won
  FROM s JOIN won ON won.task = s.task AND won.slot = s.slot;

  IF jsonb_array_length(v_won) = 0 THEN
    RETURN;
  END IF;

  RETURN QUERY
  WITH enq AS (
    SELECT e.ord, e.id, e.status
    FROM :SLUICE_SCHEMA.enqueue_controlled((SELECT jsonb_agg(w->'row' ORDER BY o) FROM jsonb_array_elements(v_won) WITH ORDINALITY AS a(w, o))) e
  ), joined AS (
    SELECT w->>'task' AS task, (w->>'slot')::timestamptz AS slot, enq.id, enq.status
    FROM jsonb_array_elements(v_won) WITH ORDINALITY AS a(w, o)
    JOIN enq ON enq.ord = a.o
  ), recorded AS (
    UPDATE :SLUICE_SCHEMA.recurring_runs r SET job_id = joined.id::bigint, status = joined.status
    FROM joined WHERE r.task = joined.task AND r.slot = joined.slot
    RETURNING 1
  ), advanced AS (
    UPDATE :SLUICE_SCHEMA.recurring r SET last_slot = greatest(r.last_slot, m.slot)
    FROM (SELECT task, max(slot) AS slot FROM joined GROUP BY task) m
    WHERE r.name = m.task
    RETURNING 1
  )
  SELECT joined.task, joined.slot, joined.id, joined.status FROM joined;
END
$fn$;
