-- Admission control: jobs of a job with an `admission` policy carry the policy's name and their
-- partition, and are admitted by the claim through the partition's gates (functions/admission.sql)
-- instead of the queue's plain walk.
ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN policy text, ADD COLUMN partition_key text;

ALTER TABLE :SLUICE_SCHEMA.dead_letters ADD COLUMN policy text, ADD COLUMN partition_key text;

-- One row per policy: its queue and its cap across all partitions. Claims of a capped policy
-- take turns on this row.
CREATE TABLE :SLUICE_SCHEMA.policies (
  name text PRIMARY KEY,
  queue text NOT NULL,
  global_max integer CHECK (global_max >= 1),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per partition of a policy, written by enqueue (the limits computed from the input,
-- last enqueue wins) and by the claim (tokens, last admission) and the settle (adaptive cap).
CREATE TABLE :SLUICE_SCHEMA.partitions (
  policy text NOT NULL,
  partition_key text NOT NULL,
  queue text NOT NULL,
  -- throttle: `rate` tokens per `per_ms`, at most `burst`; `tokens` as of `refilled_at`.
  rate double precision CHECK (rate > 0),
  per_ms bigint CHECK (per_ms > 0),
  burst double precision CHECK (burst >= 1),
  tokens double precision,
  refilled_at timestamptz,
  -- concurrency: admitted and unfinished jobs at most.
  max_in_flight integer CHECK (max_in_flight >= 1),
  -- fair interleave: jobs per partition per claim before the leftover room is shared by age.
  quantum integer CHECK (quantum >= 1),
  -- adaptive concurrency: the cap between min and max, and the EWMA of admitted-to-started lag.
  adaptive_min integer CHECK (adaptive_min >= 1),
  adaptive_max integer CHECK (adaptive_max >= 1),
  target_lag_ms integer CHECK (target_lag_ms >= 1),
  adaptive_cap double precision,
  ewma_lag_ms double precision,
  -- operator controls: paused, a cap that overrides concurrency and adaptive, and a handler's
  -- "slow down" (nothing admitted before slow_until).
  paused boolean NOT NULL DEFAULT false,
  cap_override integer CHECK (cap_override >= 0),
  slow_until timestamptz,
  last_enqueued_at timestamptz,
  last_admitted_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (policy, partition_key)
);

-- The claim visits a queue's partitions least recently admitted first.
CREATE INDEX partitions_turn ON :SLUICE_SCHEMA.partitions (queue, last_admitted_at NULLS FIRST, policy, partition_key);

-- The plain walk no longer sees jobs under a policy, so a throttled partition's backlog at the
-- head of a queue costs it nothing; those jobs are walked per partition.
CREATE INDEX jobs_ready ON :SLUICE_SCHEMA.jobs (queue, priority, run_at, id) WHERE policy IS NULL;

DROP INDEX :SLUICE_SCHEMA.jobs_claim;

CREATE INDEX jobs_admit ON :SLUICE_SCHEMA.jobs (policy, partition_key, priority, run_at, id) WHERE policy IS NOT NULL;

-- Admitted and unfinished jobs per partition (a lease past its end no longer counts).
CREATE INDEX jobs_admitted ON :SLUICE_SCHEMA.jobs (policy, partition_key, run_at) WHERE policy IS NOT NULL AND lease_token IS NOT NULL;
