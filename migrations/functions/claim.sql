-- The claim and its row type. Its result type changes at times (the `more`, `in_order` and
-- `trace_context` columns): a file applied once its content changes drops both functions and the
-- type, and creates them again, in one transaction.
DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.relay_and_claim(integer, text[], integer, bigint, text, integer, integer, text[]);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim(text[], integer, bigint, text, integer, integer, text[]);

DROP FUNCTION IF EXISTS :SLUICE_SCHEMA.claim_lease(bigint[], timestamptz[], boolean[], bigint[], timestamptz, text, boolean);

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

-- The claim is composed of stages, each a function of its own, called in this order by claim()
-- (claim_lease below; claim_open and claim_pick in claim_stages.sql, claim_room in claim_room.sql,
-- claim_take_keys in claim_keys.sql, and admission's in admission_claim.sql):
--   0, 1. claim_open: the drain's invocation lease and its single-consumer queue leases; which
--      of the drain's queues it may serve now; whether any of them is gated (a global cap, or
--      admission partitions). When none is, the plain path: claim_open also does stage 4, in the
--      same statement, and the claim goes on to stage 5;
--   2. claim_room: how many jobs each open queue may take in this claim;
--   2b. admission_room (admission_claim.sql, called by admission_walk): the partitions of admission
--      policies it admits from, and the room each partition's gates leave (throttle, concurrency,
--      adaptive cap, global cap);
--   3. the per-row condition a waiting job must meet to be picked: one fragment of SQL
--      (migrations/fragments/claim_candidate.sql) placed in each walk of 4 and 4b;
--   4. the walk: each queue's plain jobs walked on the ready index, in order, up to its room
--      (claim_open on the plain path, claim_pick on a gated one), and (4b, admission_walk, called
--      by claim_pick) each admitting partition's jobs on the admit index, a share of the claim
--      each, in turns when the policy is fair;
--   5. claim_take_keys: locks taken after picking; a picked job that cannot take its lock is
--      dropped, and the claim reports `more` so that the drain claims again once it settles;
--   6. claim_lease: the picked jobs leased to the drain, their attempt counted, and (5b,
--      admission_charge in admission_charge.sql) admitted jobs paying their partition's tokens.
-- A control plugs into one stage: a queue-level gate into 1 or 2, a per-job condition into 3, a
-- lock or counter taken per picked job into 5 (whose dropped jobs make `more` true).

-- Stage 6: leases the picked jobs (all but p_skip, dropped in stage 5) to the drain until p_until,
-- with one token, records the lease (claim_leases) and counts their attempt; admitted jobs pay
-- their partition's tokens (5b); while-executing locks of the jobs become the invocation's.
-- Returns the claim's rows, each with `p_more`.
CREATE FUNCTION :SLUICE_SCHEMA.claim_lease(
  p_ids bigint[], p_due timestamptz[], p_single boolean[], p_skip bigint[], p_until timestamptz, p_invocation text,
  p_more boolean
)
RETURNS SETOF :SLUICE_SCHEMA.claim_row
LANGUAGE plpgsql
SET jit = off
-- Generic plans always: the jobs by primary key, whatever the claim's size. Left to choose, a
-- claim of a few jobs (a custom plan's estimate is then cheaper than the generic one's) was
-- planned afresh on every call, over half of its time (bench/plan-cache.ts).
SET plan_cache_mode = force_generic_plan
AS $fn$
#variable_conflict use_column
DECLARE
  -- One token for the claim's leases: settles match each job on (id, token), and the lease rows
  -- on the token.
  v_token uuid := gen_random_uuid();
BEGIN
  RETURN QUERY
  WITH claimed AS (
    -- A HOT update: none of these columns is indexed (migration 0027). `run_at` stays the job's
    -- place in claim order; the lease's end is `lease_until`.
    UPDATE :SLUICE_SCHEMA.jobs j
    SET attempts = j.attempts + 1, lease_token = v_token, leased_by = p_invocation, started_at = now(),
        lease_until = p_until
    FROM unnest(p_ids, p_due, p_single) AS p(id, due, single)
    WHERE j.id = p.id AND NOT (p.id = ANY (p_skip))
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.lease_token, j.enqueued_at,
              p.due, p.single, j.unique_key, j.policy, j.partition_key, j.trace_context
  ), leases AS (
    -- The claim's lease rows, one per queue and admission partition: what counts the jobs in
    -- flight (the view leased_jobs) reads.
    INSERT INTO :SLUICE_SCHEMA.claim_leases (token, queue, policy, partition_key, lease_until, ids)
    SELECT v_token, queue, policy, partition_key, p_until, array_agg(id)
    FROM claimed GROUP BY queue, policy, partition_key
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
         c.enqueued_at, c.due, c.single, p_more, c.trace_context
  FROM claimed c
  -- Reading the charge makes it run before the rows are returned.
  LEFT JOIN charged ON true;
END
$fn$;

-- Claims up to p_limit due jobs from the queues this drain may serve now, through the stages
-- listed above; in each queue it stops before the first job named in p_defer (reported as a row
-- with a null id).
CREATE FUNCTION :SLUICE_SCHEMA.claim(
  p_queues text[], p_limit integer, p_lease_ms bigint, p_invocation text, p_priority integer, p_jobs_done integer,
  p_defer text[] DEFAULT '{}'
)
RETURNS SETOF :SLUICE_SCHEMA.claim_row
LANGUAGE plpgsql
-- Plans here are cheap and run often; JIT compiling them costs far more than it saves.
SET jit = off
AS $fn$
DECLARE
  v_until timestamptz := now() + p_lease_ms * interval '1 millisecond';
  v_open record;
  v_pick record;
  v_skip bigint[] := '{}';
  v_more boolean;
  v_rows integer := 0;
  v_n integer := 0;
BEGIN
  -- Stages 0 and 1; on the plain path, stage 4 too.
  SELECT * INTO v_open
  FROM :SLUICE_SCHEMA.claim_open(p_queues, p_invocation, p_priority, v_until, p_jobs_done, p_limit, p_defer);
  -- Nothing open: nothing to say.
  IF cardinality(v_open.open) = 0 THEN
    RETURN;
  END IF;

  IF v_open.gated THEN
    -- Stages 2 to 4 of a gated claim.
    SELECT * INTO v_pick FROM :SLUICE_SCHEMA.claim_pick(v_open.open, p_limit, p_defer);
  ELSE
    SELECT v_open.ids, v_open.due, v_open.single, v_open.exclusive, v_open.cut_queues, v_open.cut_names,
           false AS capped
    INTO v_pick;
  END IF;

  -- Stage 5: locks taken after picking; the jobs that could not take theirs are dropped.
  IF EXISTS (SELECT 1 FROM unnest(v_pick.exclusive) k WHERE k IS NOT NULL) THEN
    v_skip := :SLUICE_SCHEMA.claim_take_keys(v_pick.ids, v_pick.exclusive, p_invocation, v_until);
  END IF;

  -- More may remain: the claim picked as many as it was asked for, dropped some it picked (their
  -- keys are held by jobs it claimed; they can run once those settle), or admitted up to a
  -- partition's cap on running jobs.
  v_more := (v_pick.ids IS NOT NULL AND (
              cardinality(v_pick.ids) >= p_limit OR cardinality(v_skip) > 0 OR coalesce(v_pick.capped, false)));

  -- A queue left for lack of time is reported as a row without a job: its queue and the name of
  -- the job that did not fit.
  RETURN QUERY SELECT NULL::text, u.q, u.n, NULL::jsonb, NULL::smallint, NULL::integer, NULL::integer, NULL::text,
                      NULL::timestamptz, NULL::timestamptz, NULL::boolean, v_more, NULL::text
               FROM unnest(v_pick.cut_queues, v_pick.cut_names) AS u(q, n);
  GET DIAGNOSTICS v_rows = ROW_COUNT;

  -- Stage 6.
  IF v_pick.ids IS NOT NULL THEN
    RETURN QUERY SELECT * FROM :SLUICE_SCHEMA.claim_lease(v_pick.ids, v_pick.due, v_pick.single, v_skip, v_until,
                                                         p_invocation, v_more);
    GET DIAGNOSTICS v_n = ROW_COUNT;
  END IF;

  -- Nothing else to return (every job it picked went to another claim meanwhile, or it picked
  -- none): a row that carries only the flag.
  IF v_rows + v_n = 0 AND v_more THEN
    RETURN QUERY SELECT NULL::text, NULL::text, NULL::text, NULL::jsonb, NULL::smallint, NULL::integer, NULL::integer,
                        NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::boolean, true, NULL::text;
  END IF;
END
$fn$;

-- A drain's claim with an opportunistic outbox relay first: one statement, and the claim sees
-- the jobs the relay just wrote. Its rows are claim()'s. The relay runs only when an entry is
-- pending: a fresh backend then plans one small query, not the relay's, before its first claim.
CREATE FUNCTION :SLUICE_SCHEMA.relay_and_claim(
  p_relay integer, p_queues text[], p_limit integer, p_lease_ms bigint, p_invocation text, p_priority integer,
  p_jobs_done integer, p_defer text[] DEFAULT '{}'
)
RETURNS SETOF :SLUICE_SCHEMA.claim_row
LANGUAGE plpgsql
SET jit = off
AS $fn$
BEGIN
  IF p_relay > 0 AND EXISTS (SELECT 1 FROM :SLUICE_SCHEMA.outbox o WHERE o.published_at IS NULL) THEN
    PERFORM 1 FROM :SLUICE_SCHEMA.relay_outbox(p_relay);
  END IF;
  RETURN QUERY SELECT * FROM :SLUICE_SCHEMA.claim(p_queues, p_limit, p_lease_ms, p_invocation, p_priority, p_jobs_done, p_defer);
END
$fn$;
