-- The claim's stages that are functions of their own (see claim.sql for the order and for the
-- stages that are sections of the claim itself). Each control plugs into one stage.

-- Stage 1: the queues this drain may serve now: not paused, breaker closed, not held, not served
-- by a higher-priority drain, single-consumer queues only with their lease (taken in claim).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_eligible(p_queues text[], p_invocation text, p_priority integer)
RETURNS text[] LANGUAGE sql STABLE
AS $fn$
  SELECT coalesce(array_agg(q.name), '{}')
  FROM unnest(p_queues) AS q(name)
  LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name
  -- A queue without a row (not synced yet) has no state of its own to check, but a drain of
  -- higher priority holds it all the same.
  WHERE (c.name IS NULL OR (
        NOT c.paused
    AND coalesce(c.breaker_until, '-infinity') <= now()
    AND coalesce(c.held_until, '-infinity') <= now()
    AND (NOT c.single_consumer OR EXISTS (
          SELECT 1 FROM :SLUICE_SCHEMA.queue_leases l WHERE l.queue = q.name AND l.holder = p_invocation))
  ))
  AND NOT EXISTS (
    SELECT 1 FROM :SLUICE_SCHEMA.invocations o
    WHERE o.id <> p_invocation AND o.priority > p_priority AND o.expires_at > now() AND q.name = ANY (o.queues)
  )
$fn$;

-- Stage 2: the room each eligible queue has in this claim: p_limit, or less under a global cap.
-- Claims of capped queues take turns (the row lock is held to the end of the claim), so each one
-- counts the jobs in flight after the previous claim committed.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_room(p_open text[], p_limit integer)
RETURNS TABLE (queue text, single_consumer boolean, room integer)
LANGUAGE plpgsql
-- A drain serves a few queues: the planner's default guess of 1000 rows would mislead it.
ROWS 4
SET jit = off
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
                SELECT count(*)::integer FROM :SLUICE_SCHEMA.jobs f
                WHERE f.queue = q.name AND f.lease_token IS NOT NULL AND f.run_at > now())))
         END
  FROM unnest(p_open) AS q(name)
  LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name;
END
$fn$;

-- Whether stages 2 and 2b matter for these open queues: one has a global cap or admission
-- partitions. When none has, each queue's room is the claim's limit and nothing is admitted, so
-- the claim skips both. A new gate in claim_room must be named here too.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_gated(p_open text[])
RETURNS boolean LANGUAGE sql STABLE
AS $fn$
  SELECT EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.queues c WHERE c.name = ANY (p_open) AND c.global_cap IS NOT NULL)
      OR EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.partitions g WHERE g.queue = ANY (p_open))
$fn$;

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
