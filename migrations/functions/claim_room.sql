-- Stage 2: the room each eligible queue has in this claim: p_limit, or less under a global cap.
-- Claims of capped queues take turns (the row lock is held to the end of the claim), so each one
-- counts the jobs in flight after the previous claim committed.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_room(p_open text[], p_limit integer)
RETURNS TABLE (queue text, single_consumer boolean, room integer)
LANGUAGE plpgsql
-- A drain serves a few queues: the planner's default guess of 1000 rows would mislead it.
ROWS 4
SET jit = off
-- Generic plans always: left to choose, PostgreSQL planned its statements afresh on every call
-- (a generic plan's estimate, with the queues unknown, looks dearer than a custom one's), about
-- three quarters of its time. Each statement is the same index lookup whatever the queues.
SET plan_cache_mode = force_generic_plan
AS $fn$
BEGIN
  PERFORM 1 FROM :SLUICE_SCHEMA.queues c
  WHERE c.name = ANY (p_open) AND c.global_cap IS NOT NULL
  ORDER BY c.name
  FOR UPDATE;

  RETURN QUERY
  SELECT q.name,
         coalesce(c.single_consumer, false),
         CASE WHEN c.global_cap IS NULL THEN p_limit
              ELSE least(p_limit, greatest(0, c.global_cap - (
                SELECT count(*)::integer FROM :SLUICE_SCHEMA.leased_jobs f
                WHERE f.queue = q.name AND f.lease_until > now())))
         END
  FROM unnest(p_open) AS q(name)
  LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name;
END
$fn$;
