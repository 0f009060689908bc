-- The claim's stages (see claim.sql for the order; claim_lease, which returns the claim's row
-- type, is there). Each control plugs into one stage.

-- Stages 0 and 1 were two functions (claim_register, claim_eligible), and claim_pick took whether
-- the open queues are gated: claim_open does all three now, in one statement.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_register(text, text[], integer, timestamptz, integer);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_eligible(text[], text, integer);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_gated(text[]);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_pick(text[], integer, text[], boolean);
-- Its result gained `restored`, then lost it (migration 0027: a job whose lease ran out keeps its
-- place, so there is nothing to put back); the single-consumer restore went with it.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_open(text[], text, integer, timestamptz, integer, integer, text[]);
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_restore_places(text);

-- Stages 0 and 1, and stage 4 on the plain path, in one statement (a fresh backend plans one
-- statement, not three functions', to take its first job):
--   0. registers or renews the drain's invocation lease until p_until, and takes or renews the
--      leases of its single-consumer queues (free, expired, or already its own);
--   1. opens the queues it may serve now: not paused, breaker closed, not held, not served by a
--      higher-priority drain, single-consumer queues only with their lease and none of their
--      jobs leased. Jobs whose lease ran out (their drain died) are taken again at their places,
--      which a lease keeps (`run_at`), ahead of the queue's later jobs;
--   whether any open queue is gated: one has a global cap or admission partitions, so stages 2
--      and 2b have work to do and claim_pick walks them. A new gate in claim_room is named here too;
--   4. when none is (the plain path), each open queue's jobs walked on the ready index in claim
--      order, up to p_limit, meeting stage 3 and not locked by another claim; in each queue it
--      stops before the first job named in p_defer. The walk's results are claim_pick's.
-- The claim commits with the server's durability setting: a claim forgotten in a crash while its
-- drain runs the jobs would let a second drain claim and run them at the same time.
CREATE FUNCTION :SLUICE_SCHEMA.claim_open(
  p_queues text[], p_invocation text, p_priority integer, p_until timestamptz, p_jobs_done integer,
  p_limit integer, p_defer text[],
  OUT open text[], OUT gated boolean, OUT ids bigint[], OUT due timestamptz[], OUT single boolean[],
  OUT exclusive text[], OUT cut_queues text[], OUT cut_names text[]
)
LANGUAGE plpgsql
SET jit = off
-- Generic plans always: each walk's limit comes from a row (the open queue's room), so a plan
-- made for one call's arguments is the same walk. Left to choose, PostgreSQL planned the
-- statement afresh on every call at a large backlog (its two arms' estimates made a custom plan
-- look cheaper): a single-job claim at 1M waiting jobs took 6.3 ms p50 against 3.5 generic.
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
BEGIN
  WITH registered AS (
    INSERT INTO :SLUICE_SCHEMA.invocations AS i (id, queues, priority, expires_at, jobs_done)
    VALUES (p_invocation, p_queues, p_priority, p_until, p_jobs_done)
    ON CONFLICT ON CONSTRAINT invocations_pkey DO UPDATE SET expires_at = excluded.expires_at, jobs_done = excluded.jobs_done
  ), queue_leased AS (
    -- Returns the single-consumer queues whose lease is this drain's now.
    INSERT INTO :SLUICE_SCHEMA.queue_leases AS l (queue, holder, expires_at)
    SELECT c.name, p_invocation, p_until
    FROM :SLUICE_SCHEMA.queues c
    WHERE c.name = ANY (p_queues) AND c.single_consumer AND NOT c.paused
    ON CONFLICT ON CONSTRAINT queue_leases_pkey DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
    WHERE l.holder = excluded.holder OR l.expires_at < now()
    RETURNING l.queue
  ), opened AS (
    SELECT q.name, coalesce(c.single_consumer, false) AS single_consumer, c.global_cap, p_limit AS room
    FROM unnest(p_queues) AS q(name)
    LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name
    -- A single-consumer queue's first job still leased: its lease may have been freed by a
    -- transaction this statement waited for, and then its snapshot shows that holder's jobs
    -- leased, not as that commit left them (handed back or retrying, ahead of the jobs after
    -- them). It claims nothing then; its next claim sees them. Looked up per queue on its lease
    -- rows (a lateral subquery with a limit), read only for a single-consumer queue.
    LEFT JOIN LATERAL (
      SELECT true AS busy FROM :SLUICE_SCHEMA.leased_jobs l
      WHERE c.single_consumer AND l.queue = c.name AND l.lease_until > now()
      LIMIT 1
    ) leased ON true
    -- A queue without a row (not synced yet) has no state of its own to check, but a drain of
    -- higher priority holds it all the same.
    WHERE (c.name IS NULL OR (
          NOT c.paused
      AND coalesce(c.breaker_until, '-infinity') <= now()
      AND coalesce(c.held_until, '-infinity') <= now()
      AND (NOT c.single_consumer OR (
            c.name IN (SELECT queue FROM queue_leased)
        AND leased.busy IS NULL))
    ))
    AND NOT EXISTS (
      SELECT 1 FROM :SLUICE_SCHEMA.invocations o
      WHERE o.id <> p_invocation AND o.priority > p_priority AND o.expires_at > now() AND q.name = ANY (o.queues)
    )
  ), gate AS (
    -- Each open queue's first partition in the ring index's order (a lateral subquery with a
    -- limit). When one queue owns most partitions, statistics say any queue does, and the planner
    -- would read them all, on every claim, to find none of a plain queue's.
    SELECT EXISTS (SELECT 1 FROM opened WHERE opened.global_cap IS NOT NULL)
        OR EXISTS (SELECT 1 FROM opened
                   CROSS JOIN LATERAL (SELECT 1 FROM :SLUICE_SCHEMA.partitions g WHERE g.queue = opened.name
                                       ORDER BY g.queue, g.ring LIMIT 1) g)
           AS gated
  ), candidates AS (
    SELECT p.id, p.run_at, p.priority, p.exclusive_key, p.name, opened.name AS queue, opened.single_consumer
    -- Stage 4 with stage 3 in it (migrations/fragments/plain_walk.sql), up to the claim's limit.
    FROM opened CROSS JOIN LATERAL :PLAIN_WALK(opened) p
    WHERE NOT (SELECT gated FROM gate)
  ),
  -- Per queue, the stop before the first job the drain cannot fit (migrations/fragments/time_cut.sql).
  cut AS :TIME_CUT(candidates),
  picked AS (
    SELECT c.id, c.run_at, c.priority, c.exclusive_key, c.single_consumer
    FROM candidates c
    LEFT JOIN cut ON cut.queue = c.queue
    WHERE cut.queue IS NULL OR (c.priority, c.run_at, c.id) < (cut.priority, cut.run_at, cut.id)
    ORDER BY c.priority, c.run_at, c.id
    LIMIT p_limit
  )
  SELECT (SELECT coalesce(array_agg(name), '{}') FROM opened),
         (SELECT gated FROM gate),
         (SELECT array_agg(id ORDER BY priority, run_at, id) FROM picked),
         (SELECT array_agg(run_at ORDER BY priority, run_at, id) FROM picked),
         (SELECT array_agg(single_consumer ORDER BY priority, run_at, id) FROM picked),
         (SELECT array_agg(exclusive_key ORDER BY priority, run_at, id) FROM picked),
         (SELECT array_agg(queue ORDER BY queue) FROM cut),
         (SELECT array_agg(name ORDER BY queue) FROM cut)
  INTO open, gated, ids, due, single, exclusive, cut_queues, cut_names;
END
$fn$;

-- Stage 4 on a gated claim (claim_open walks the plain path's queues itself): each open queue
-- walked on the ready index in order, up to its room (stage 2), taking the jobs that meet stage 3
-- and that no other claim has locked, and each admitting partition's share (4b). Returns the
-- picked jobs in claim order (their due times, whether their queue is single-consumer, their
-- while-executing keys), the queues it stopped in before a job named in p_defer (with that job's
-- name), and whether a partition admitted up to a cap or gave its whole share (`capped`: more may
-- come once these settle).
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.claim_pick(
  p_open text[], p_limit integer, p_defer text[],
  OUT ids bigint[], OUT due timestamptz[], OUT single boolean[], OUT exclusive text[], OUT cut_queues text[],
  OUT cut_names text[], OUT capped boolean
)
LANGUAGE plpgsql
SET jit = off
-- Its plan is cached (PostgreSQL's choice), not made for each call: the walks' limits come from
-- rows (each queue's room, each partition's take), not from the arguments, so a plan made for one
-- call's arguments is the same walk as a generic one. Planning it on every call was about 60 % of
-- its own time in a claim under an admission policy.
SET plan_cache_mode = auto
AS $fn$
#variable_conflict use_column
BEGIN
  WITH open AS (
    SELECT r.queue AS name, r.single_consumer, r.room FROM :SLUICE_SCHEMA.claim_room(p_open, p_limit) r
  ), plain AS (
    SELECT p.id, p.run_at, p.priority, p.exclusive_key, p.name, open.name AS queue, open.single_consumer,
           NULL::text AS policy, NULL::text AS partition_key, 1::bigint AS turn, NULL::integer AS global_room,
           false AS more
    -- Stage 4 with stage 3 in it (migrations/fragments/plain_walk.sql), up to the queue's room.
    FROM open CROSS JOIN LATERAL :PLAIN_WALK(open) p
    WHERE open.room > 0
  ), admitted AS (
    -- Stages 2b and 4b (admission_walk, in admission_claim.sql): the jobs of admission policies'
    -- partitions that their gates let this claim take, in turns when the policy is fair.
    SELECT w.id, w.run_at, w.priority, w.exclusive_key, w.name, w.queue, open.single_consumer, w.policy,
           w.partition_key, w.turn, w.global_room, w.more
    FROM :SLUICE_SCHEMA.admission_walk(p_open, p_limit) w
    JOIN open ON open.name = w.queue
  ), ranked AS (
    -- A queue's room (its global cap) and a policy's global cap bound what the claim takes.
    SELECT c.*,
           row_number() OVER (PARTITION BY c.queue ORDER BY c.turn, c.priority, c.run_at, c.id) AS in_queue,
           row_number() OVER (PARTITION BY c.policy ORDER BY c.turn, c.priority, c.run_at, c.id) AS in_policy
    FROM (SELECT * FROM plain UNION ALL SELECT * FROM admitted) c
  ), candidates AS (
    SELECT r.queue, r.name, r.id, r.run_at, r.priority, r.exclusive_key, r.single_consumer, r.turn
    FROM ranked r JOIN open ON open.name = r.queue
    WHERE r.in_queue <= open.room
      AND (r.policy IS NULL OR r.global_room IS NULL OR r.in_policy <= r.global_room)
  ),
  -- Per queue, the stop before the first job the drain cannot fit (migrations/fragments/time_cut.sql).
  cut AS :TIME_CUT(candidates),
  picked AS (
    SELECT c.id, c.run_at, c.priority, c.exclusive_key, c.single_consumer, c.turn
    FROM candidates c
    LEFT JOIN cut ON cut.queue = c.queue
    WHERE cut.queue IS NULL OR (c.priority, c.run_at, c.id) < (cut.priority, cut.run_at, cut.id)
    ORDER BY c.turn, c.priority, c.run_at, c.id
    LIMIT p_limit
  )
  SELECT (SELECT array_agg(id ORDER BY turn, priority, run_at, id) FROM picked),
         (SELECT array_agg(run_at ORDER BY turn, priority, run_at, id) FROM picked),
         (SELECT array_agg(single_consumer ORDER BY turn, priority, run_at, id) FROM picked),
         (SELECT array_agg(exclusive_key ORDER BY turn, priority, run_at, id) FROM picked),
         (SELECT array_agg(queue ORDER BY queue) FROM cut),
         (SELECT array_agg(name ORDER BY queue) FROM cut),
         -- A partition that admitted up to a cap on running jobs may admit more once they settle;
         -- one that gave its whole share may have more to give now.
         (SELECT bool_or(more) FROM admitted)
  INTO ids, due, single, exclusive, cut_queues, cut_names, capped;
END
$fn$;
