-- Admission control inside the claim (admission.sql has the gates): which partitions may admit
-- now and how many jobs each (stage 2b), and their jobs (4b). Their order is admission_ring.sql's,
-- their tokens are paid by admission_charge.sql (5b).

-- Stage 2b: the partitions this claim admits from, with the room each has, round robin around
-- each queue's ring from its place (admission_ring.sql). `capped`: a cap on running jobs (the
-- partition's or the policy's) bounds the room, so the claim reports `more`: the cap frees up as
-- these jobs settle. Partitions another claim is deciding on are skipped (SKIP LOCKED), so a busy
-- or throttled partition never holds a claim up; their rows stay locked to the end of the claim,
-- which charges their tokens. A capped policy's row is locked (claims of it take turns), and the
-- counts are read by a statement that starts after the locks are held, so they see every claim
-- that held them before.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.admission_room(text[], integer);

CREATE FUNCTION :SLUICE_SCHEMA.admission_room(p_open text[], p_limit integer)
RETURNS TABLE (
  policy text, partition_key text, queue text, room integer, quantum integer, global_room integer, capped boolean
)
LANGUAGE plpgsql
ROWS 16
SET jit = off
-- Partitions are visited in ring order on partitions_ring, stopping after p_limit admissible
-- ones; the planner, which cannot know that most partitions pass the filters, would otherwise read
-- and sort all of a queue's partitions on every claim.
-- Running jobs are counted on their partition's lease rows, in the order of the one index that
-- gives it (claim_leases_partition): with sorts off, no other index can serve the count. Left to
-- choose while statistics said the table was empty (as VACUUM leaves it between drains), the
-- planner read every lease row on claim_leases_token for each partition's count.
SET enable_sort = off
SET enable_seqscan = off
-- Its plans are cached, not made for each call: planning them cost more than running them.
-- Generic plans always: the arcs' limit and bounds come from the queue's row, so the planner's
-- guess of a generic plan's cost is poor, and left to choose it kept planning the arcs' statement
-- afresh on every call (about half of this function's time). Each statement's plan is the same
-- index walk whatever the values.
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
DECLARE
  v_policies text[];
  v_parts text[];
  v_queues text[];
  v_quanta integer[];
  v_by_tokens integer[];
  v_caps integer[];
  v_rings integer[];
  v_arcs integer[];
  v_at_ring integer[];
  v_at_policy text[];
  v_at_key text[];
BEGIN
  PERFORM 1 FROM :SLUICE_SCHEMA.policies g
  WHERE g.queue = ANY (p_open) AND g.global_max IS NOT NULL
  ORDER BY g.name
  FOR UPDATE;

  SELECT * INTO v_at_ring, v_at_policy, v_at_key FROM :SLUICE_SCHEMA.admission_places(p_open);

  -- Per queue, up to p_limit partitions that look admissible (counts read before the lock are
  -- checked again below): not paused or slowed down, a token left, room under the cap, a due job.
  -- A locked row is read as its latest version, so its tokens and cap are current. The ring is
  -- read in two arcs: from the queue's place to the ring's end, then from its beginning up to the
  -- place. One statement: the arcs are the rows of a VALUES list, walked in order under the
  -- queue's limit, so the second arc is read only for a queue the first left short.
  SELECT array_agg(p.policy), array_agg(p.partition_key), array_agg(p.queue), array_agg(p.quantum),
         array_agg(p.by_tokens), array_agg(p.cap), array_agg(p.ring), array_agg(p.arc)
  INTO v_policies, v_parts, v_queues, v_quanta, v_by_tokens, v_caps, v_rings, v_arcs
  FROM unnest(p_open, v_at_ring, v_at_policy, v_at_key) AS q(name, ring, policy, partition_key)
  CROSS JOIN LATERAL (
    SELECT arcs.arc, p.*
    FROM (VALUES (1), (2)) AS arcs(arc)
    CROSS JOIN LATERAL (
      SELECT p.policy, p.partition_key, p.queue, p.quantum, p.ring,
             CASE WHEN p.rate IS NULL THEN p_limit
                  ELSE floor(:SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst))::integer
             END AS by_tokens,
             :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap) AS cap
      FROM :SLUICE_SCHEMA.partitions p
      -- The due job is looked up per partition, the first in the admit index's order (a lateral
      -- subquery with a limit): as an EXISTS the planner may turn it into a join that reads every
      -- job of the table, out-of-token partitions' backlogs included, on every claim. The admit
      -- index holds leased jobs too (migration 0027): a job counts if no lease holds it.
      CROSS JOIN LATERAL (
        SELECT 1 FROM :SLUICE_SCHEMA.jobs j
        WHERE j.policy = p.policy AND j.partition_key = p.partition_key
          AND (j.lease_token IS NULL OR j.lease_until <= now())
          AND j.run_at <= now() AND j.attempts < j.max_attempts
        ORDER BY j.priority, j.run_at, j.id
        LIMIT 1
      ) due
      WHERE p.queue = q.name
        -- The arc, on the index; then, among partitions at the place's own point of the ring, those
        -- after it (arc 1) or up to it (arc 2).
        AND p.ring >= CASE WHEN arcs.arc = 1 THEN q.ring ELSE -2147483648 END
        AND p.ring <= CASE WHEN arcs.arc = 1 THEN 2147483647 ELSE q.ring END
        AND ((p.ring, p.policy, p.partition_key) > (q.ring, q.policy, q.partition_key)) = (arcs.arc = 1)
        AND NOT p.paused AND coalesce(p.slow_until, '-infinity') <= now()
        AND (p.rate IS NULL OR :SLUICE_SCHEMA.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) >= 1)
        AND (:SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap) IS NULL
             OR :SLUICE_SCHEMA.admission_cap(p.cap_override, p.max_in_flight, p.adaptive_cap) > (
                  SELECT count(*) FROM (
                    SELECT FROM :SLUICE_SCHEMA.leased_jobs a
                    WHERE a.policy = p.policy AND a.partition_key = p.partition_key AND a.lease_until > now()
                    ORDER BY a.policy, a.partition_key, a.lease_until) running))
      ORDER BY p.ring, p.policy, p.partition_key
      LIMIT p_limit
      FOR UPDATE OF p SKIP LOCKED
    ) p
    -- Arc 1's partitions, then arc 2's, up to the limit: what is not read is not locked.
    LIMIT p_limit
  ) p;

  IF coalesce(cardinality(v_policies), 0) = 0 THEN
    RETURN;
  END IF;

  PERFORM :SLUICE_SCHEMA.admission_move_places(v_queues, v_arcs, v_rings, v_policies, v_parts, '' = ANY (v_at_policy));

  -- A statement that starts after the locks are held: its counts see every claim that held them before.
  -- Materialized: the outer query reads by_cap three times, and each read would count again.
  RETURN QUERY
  WITH rooms AS MATERIALIZED (
    SELECT l.policy, l.partition_key, l.queue, l.quantum, l.by_tokens,
           CASE WHEN l.cap IS NULL THEN p_limit
                ELSE greatest(0, l.cap - (
                  SELECT count(*)::integer FROM (
                    SELECT FROM :SLUICE_SCHEMA.leased_jobs a
                    WHERE a.policy = l.policy AND a.partition_key = l.partition_key AND a.lease_until > now()
                    ORDER BY a.policy, a.partition_key, a.lease_until) running)) END AS by_cap,
           CASE WHEN g.global_max IS NULL THEN NULL
                ELSE greatest(0, g.global_max - (
                  SELECT count(*)::integer FROM (
                    SELECT FROM :SLUICE_SCHEMA.leased_jobs a
                    WHERE a.policy = l.policy AND a.lease_until > now()
                    ORDER BY a.policy, a.partition_key, a.lease_until) running)) END AS by_global
    FROM unnest(v_policies, v_parts, v_queues, v_quanta, v_by_tokens, v_caps)
           AS l(policy, partition_key, queue, quantum, by_tokens, cap)
    LEFT JOIN :SLUICE_SCHEMA.policies g ON g.name = l.policy
  )
  SELECT r.policy, r.partition_key, r.queue, least(p_limit, r.by_tokens, r.by_cap), r.quantum, r.by_global,
         (r.by_cap < p_limit AND r.by_cap <= r.by_tokens) OR coalesce(r.by_global < p_limit, false)
  FROM rooms r;
END
$fn$;

-- Stages 2b and 4b of the claim: the partitions it admits from (admission_room) and, from each,
-- the due jobs it may take, read and locked on the partition's admit index (a job whose lease ran
-- out at its place): a share of the claim (at least a quantum), not each partition's
-- whole room. With fair interleave the partitions take turns: each one's first `quantum` jobs
-- (turn 1) come before any partition's next `quantum` (turn 2), and so on; within a turn, by age.
-- Without it, all by age. `more` is set on the rows of a partition that admitted up to a cap on
-- running jobs (it frees as they settle) or gave its whole share (it may have more to give now):
-- the claim then reports `more`.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.admission_walk(text[], integer);

CREATE FUNCTION :SLUICE_SCHEMA.admission_walk(p_open text[], p_limit integer)
RETURNS TABLE (
  id bigint, run_at timestamptz, priority smallint, exclusive_key text, name text, queue text, policy text,
  partition_key text, turn bigint, global_room integer, more boolean
)
LANGUAGE plpgsql
ROWS 64
SET jit = off
-- A function of its own (not inlined): its plan is cached, where a LANGUAGE sql one is planned on
-- every call. PostgreSQL chooses the plan; a generic one always was slower (bench/stages.ts).
SET plan_cache_mode = auto
AS $fn$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  WITH admitting AS (
    SELECT a.*,
           least(a.room, greatest(coalesce(a.quantum, 1),
                                  ceil(p_limit::numeric / count(*) OVER (PARTITION BY a.queue))::integer)) AS take
    FROM :SLUICE_SCHEMA.admission_room(p_open, p_limit) a
  )
  SELECT x.id, x.run_at, x.priority, x.exclusive_key, x.name, a.queue, a.policy, a.partition_key,
         CASE WHEN a.quantum IS NULL THEN 1
              ELSE (row_number() OVER (PARTITION BY a.policy, a.partition_key ORDER BY x.priority, x.run_at, x.id)
                    - 1) / a.quantum + 1 END,
         a.global_room,
         a.capped OR (a.take < a.room AND count(*) OVER (PARTITION BY a.policy, a.partition_key) >= a.take)
  -- Stage 4b with stage 3 in it (migrations/fragments/admit_walk.sql), up to the partition's take.
  FROM admitting a
  CROSS JOIN LATERAL :ADMIT_WALK(a) x
  WHERE a.take > 0;
END
$fn$;
