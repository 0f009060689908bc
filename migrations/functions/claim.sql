-- The claim and its row type. Its result type changes at times (the `more`, `in_order` and
-- `trace_context` columns): a file applied once its content changes drops both functions and the
-- type, and creates them again, in one transaction.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.relay_and_claim(integer, text[], integer, bigint, text, integer, integer, text[]);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim(text[], integer, bigint, text, integer, integer, text[]);

DROP TYPE IF EXISTS :SLUICE_SCHEMA.claim_row;

-- A claim's row: a claimed job; or (null id) a queue the claim stopped in before a job the drain
-- cannot fit in its time left, with that job's name; or (null id and name) only the `more` flag.
-- `more` is the same on every row of one claim: the claim took fewer jobs than it picked, or
-- picked as many as it was asked for, so a claim made once these jobs settle may find more.
-- `in_order` says how the drain runs a claimed job, whatever control asked for it (today a
-- single-consumer queue): the jobs of its queue one at a time in claim order, a failure keeping
-- its place, and nothing claimed before their outcomes are settled. The drain names no control.
-- `trace_context` is the W3C trace context the job was enqueued with (null when none).
CREATE TYPE :SLUICE_SCHEMA.claim_row AS (
  id text, queue text, name text, payload jsonb, priority smallint, attempts integer, max_attempts integer,
  token text, enqueued_at timestamptz, due_at timestamptz, in_order boolean, more boolean, trace_context text
);

-- The claim is composed of stages, called in this order (1, 2 and 5 are functions of their own,
-- in claim_stages.sql):
--   1. claim_eligible: which of the drain's queues it may serve now;
--   2. claim_room: how many jobs each of them may take in this claim;
--   2b. admission_room (admission.sql, called by admission_walk): the partitions of admission
--      policies it admits from, and the room each partition's gates leave (throttle, concurrency,
--      adaptive cap, global cap);
--   3. the per-row condition a waiting job must meet to be picked: one fragment of SQL
--      (migrations/fragments/claim_candidate.sql) placed in each walk of 4 and 4b;
--   4. picking (in claim itself): each queue's plain jobs walked on the ready index, in order, up
--      to its room, and (4b, admission_walk) each admitting partition's jobs on the admit index, a
--      share of the claim each, in turns when the policy is fair;
--   5. claim_take_keys: locks taken after picking; a picked job that cannot take its lock is
--      dropped, and the claim reports `more` so that the drain claims again once it settles;
--   5b. admission_charge (admission.sql): admitted jobs pay their partition's tokens.
-- A control plugs into one stage: a queue-level gate into 1 or 2, a per-job condition into 3, a
-- lock or counter taken per picked job into 5 (whose dropped jobs make `more` true).

-- Claims up to p_limit due jobs from the queues this drain may serve now, through the stages
-- listed above; in each queue it stops before the first job named in p_defer (reported as a row
-- with a null id). Registers or renews the drain's invocation lease and single-consumer queue
-- leases.
CREATE FUNCTION :SLUICE_SCHEMA.claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_invocation text, p_priority integer, p_jobs_done integer,
  p_defer text[] DEFAULT '{}'
)
RETURNS SETOF :SLUICE_SCHEMA.claim_row
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
-- Each call plans for its own arguments (queues, limit): a generic plan would not know the room.
SET plan_cache_mode = force_custom_plan
AS $fn$
#variable_conflict use_column
DECLARE
  v_until timestamptz := now() + p_lease_ms * interval '1 millisecond';
  v_open text[];
  v_ids bigint[];
  v_due timestamptz[];
  v_single boolean[];
  v_exclusive text[];
  v_skip bigint[] := '{}';
  v_cut_queues text[];
  v_cut_names text[];
  v_more boolean;
  v_capped boolean;
  v_rows integer := 0;
  v_n integer := 0;
  v_gated boolean;
BEGIN
  -- The claim commits with the server's durability setting: a claim forgotten in a crash while
  -- its drain runs the jobs would let a second drain claim and run them at the same time.
  INSERT INTO :SLUICE_SCHEMA.invocations AS i (id, queues, priority, expires_at, jobs_done)
  VALUES (p_invocation, p_queues, p_priority, v_until, p_jobs_done)
  ON CONFLICT ON CONSTRAINT invocations_pkey DO UPDATE SET expires_at = excluded.expires_at, jobs_done = excluded.jobs_done;

  -- Single-consumer queues: take or renew the queue lease (free, expired, or already ours).
  INSERT INTO :SLUICE_SCHEMA.queue_leases AS l (queue, holder, expires_at)
  SELECT c.name, p_invocation, v_until
  FROM :SLUICE_SCHEMA.queues c
  WHERE c.name = ANY (p_queues) AND c.single_consumer AND NOT c.paused
  ON CONFLICT ON CONSTRAINT queue_leases_pkey DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE l.holder = excluded.holder OR l.expires_at < now();

  -- Stage 1: the queues it may serve now.
  v_open := :SLUICE_SCHEMA.claim_eligible(p_queues, p_invocation, p_priority);
  IF cardinality(v_open) = 0 THEN
    RETURN;
  END IF;

  -- Stages 2 and 2b, skipped when no open queue is gated (claim_gated): the plan drops them.
  v_gated := :SLUICE_SCHEMA.claim_gated(v_open);

  -- Stage 4, picking: each queue walked on the claim index in order, up to its room (stage 2),
  -- taking the jobs that meet stage 3 and that no other claim has locked.
  WITH open AS (
    SELECT r.queue AS name, r.single_consumer, r.room FROM :SLUICE_SCHEMA.claim_room(v_open, p_limit) r
    WHERE v_gated
    UNION ALL
    SELECT q.name, coalesce(c.single_consumer, false), p_limit
    FROM unnest(v_open) AS q(name) LEFT JOIN :SLUICE_SCHEMA.queues c ON c.name = q.name
    WHERE NOT v_gated
  ), plain AS (
    SELECT p.id, p.run_at, p.priority, p.exclusive_key, p.name, open.name AS queue, open.single_consumer,
           NULL::text AS policy, NULL::text AS partition_key, 1::bigint AS turn, NULL::integer AS global_room,
           false AS more
    FROM open
    CROSS JOIN LATERAL (
      SELECT j.id, j.priority, j.run_at, j.exclusive_key, j.name
      FROM :SLUICE_SCHEMA.jobs j
      WHERE j.queue = open.name AND j.policy IS NULL
        -- Stage 3, the per-row condition (migrations/fragments/claim_candidate.sql).
        AND :CLAIM_CANDIDATE(j)
      ORDER BY j.priority, j.run_at, j.id
      LIMIT open.room
      FOR UPDATE SKIP LOCKED
    ) p
    WHERE open.room > 0
  ), admitted AS (
    -- Stages 2b and 4b (admission_walk, in admission.sql): the jobs of admission policies'
    -- partitions that their gates let this claim take, in turns when the policy is fair.
    SELECT w.id, w.run_at, w.priority, w.exclusive_key, w.name, w.queue, open.single_consumer, w.policy,
           w.partition_key, w.turn, w.global_room, w.more
    FROM :SLUICE_SCHEMA.admission_walk(v_open, p_limit) w
    JOIN open ON open.name = w.queue
    WHERE v_gated
  ), ranked AS (
    -- A queue's room (its global cap) and a policy's global cap bound what the claim takes.
    SELECT c.*,
           row_number() OVER (PARTITION BY c.queue ORDER BY c.turn, c.priority, c.run_at, c.id) AS in_queue,
           row_number() OVER (PARTITION BY c.policy ORDER BY c.turn, c.priority, c.run_at, c.id) AS in_policy
    FROM (SELECT * FROM plain UNION ALL SELECT * FROM admitted) c
  ), candidates AS (
    SELECT r.queue, r.name, r.id, r.run_at, r.priority, r.exclusive_key, r.single_consumer, r.turn
    FROM ranked r JOIN open ON open.name = r.queue
    WHERE v_gated AND r.in_queue <= open.room
      AND (r.policy IS NULL OR r.global_room IS NULL OR r.in_policy <= r.global_room)
    UNION ALL
    -- Without gates a queue's walk stops at its room already: every plain job is a candidate.
    SELECT p.queue, p.name, p.id, p.run_at, p.priority, p.exclusive_key, p.single_consumer, p.turn
    FROM plain p
    WHERE NOT v_gated
  ), cut AS (
    -- Per queue, the first candidate of a job the drain cannot fit in its time left: it and
    -- everything behind it in that queue stay where they are, in order, for a drain with time.
    SELECT DISTINCT ON (c.queue) c.queue, c.name, c.priority, c.run_at, c.id
    FROM candidates c
    WHERE c.name = ANY (p_defer)
    ORDER BY c.queue, c.priority, c.run_at, c.id
  ), picked AS (
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
  INTO v_ids, v_due, v_single, v_exclusive, v_cut_queues, v_cut_names, v_capped;

  IF v_ids IS NULL THEN
    -- Nothing picked: at most the queues left for lack of time.
    RETURN QUERY SELECT NULL::text, u.q, u.n, NULL::jsonb, NULL::smallint, NULL::integer, NULL::integer, NULL::text,
                        NULL::timestamptz, NULL::timestamptz, NULL::boolean, false, NULL::text
                 FROM unnest(v_cut_queues, v_cut_names) AS u(q, n);
    RETURN;
  END IF;

  -- Stage 5: locks taken after picking; the jobs that could not take theirs are dropped.
  IF EXISTS (SELECT 1 FROM unnest(v_exclusive) k WHERE k IS NOT NULL) THEN
    v_skip := :SLUICE_SCHEMA.claim_take_keys(v_ids, v_exclusive, p_invocation, v_until);
  END IF;

  -- More may remain: the claim picked as many as it was asked for, dropped some it picked
  -- (their keys are held by jobs it claimed; they can run once those settle), or admitted up to
  -- a partition's cap on running jobs.
  v_more := cardinality(v_ids) >= p_limit OR cardinality(v_skip) > 0 OR coalesce(v_capped, false);

  -- A queue left for lack of time is reported as a row without a job: its queue and the name of
  -- the job that did not fit.
  RETURN QUERY SELECT NULL::text, u.q, u.n, NULL::jsonb, NULL::smallint, NULL::integer, NULL::integer, NULL::text,
                      NULL::timestamptz, NULL::timestamptz, NULL::boolean, v_more, NULL::text
               FROM unnest(v_cut_queues, v_cut_names) AS u(q, n);
  GET DIAGNOSTICS v_rows = ROW_COUNT;

  RETURN QUERY
  WITH claimed AS (
    UPDATE :SLUICE_SCHEMA.jobs j
    SET run_at = v_until, attempts = j.attempts + 1, lease_token = gen_random_uuid(), leased_by = p_invocation,
        started_at = now()
    FROM unnest(v_ids, v_due, v_single) AS p(id, due, single)
    WHERE j.id = p.id AND NOT (p.id = ANY (v_skip))
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.lease_token, j.enqueued_at,
              p.due, p.single, j.unique_key, j.policy, j.partition_key, j.trace_context
  ), charged AS (
    -- Admitted jobs pay their partition's tokens (stage 5b).
    SELECT :SLUICE_SCHEMA.admission_charge(array_agg(policy), array_agg(partition_key)) AS n
    FROM claimed WHERE policy IS NOT NULL HAVING count(*) > 0
  ), executing AS (
    UPDATE :SLUICE_SCHEMA.unique_locks u
    SET state = 'executing', owner = p_invocation
    FROM claimed
    WHERE claimed.unique_key IS NOT NULL AND u.key = claimed.unique_key AND u.job_id = claimed.id
    RETURNING 1
  )
  SELECT c.id::text, c.queue, c.name, c.payload, c.priority, c.attempts, c.max_attempts, c.lease_token::text,
         c.enqueued_at, c.due, c.single, v_more, c.trace_context
  FROM claimed c
  -- Reading the charge makes it run before the rows are returned.
  LEFT JOIN charged ON true;
  GET DIAGNOSTICS v_n = ROW_COUNT;

  -- Every job it picked went to another claim meanwhile: a row that carries only the flag.
  IF v_rows + v_n = 0 AND v_more THEN
    RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::smallint, NULL::integer, NULL::integer,
                        NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::boolean, true, NULL::text;
  END IF;
END
$fn$;

-- A drain's claim with an opportunistic outbox relay first: one statement, and the claim sees
-- the jobs the relay just wrote. Its rows are claim()'s.
CREATE FUNCTION :SLUICE_SCHEMA.relay_and_claim(
  p_relay integer, p_queues text[], p_limit integer, p_lease_ms bigint, p_invocation text, p_priority integer,
  p_jobs_done integer, p_defer text[] DEFAULT '{}'
)
RETURNS SETOF :SLUICE_SCHEMA.claim_row
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  IF p_relay > 0 THEN
    PERFORM 1 FROM :SLUICE_SCHEMA.relay_outbox(p_relay);
  END IF;
  RETURN QUERY SELECT * FROM :SLUICE_SCHEMA.claim(p_queues, p_limit, p_lease_ms, p_invocation, p_priority, p_jobs_done, p_defer);
END
$fn$;
