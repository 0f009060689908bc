import type { Statement } from '../db/types.js'

/**
 * Waiting jobs are counted up to this many per policy or partition (`inspect.policies()`,
 * `inspect.partitions()`): counting stops there, so a large backlog costs a bounded read.
 */
export const PENDING_COUNT_LIMIT = 10_000

/** An admission policy, as `sluice.inspect.policies()` returns it. */
export interface PolicyRow {
  /** The policy's name: its job's. */
  name: string
  queue: string
  /** The cap on admitted and unfinished jobs across all partitions, or null for none. */
  globalMax: number | null
  /** How many partitions the policy has. */
  partitions: number
  /** Jobs waiting to run, due or scheduled, counted up to PENDING_COUNT_LIMIT. */
  pending: number
  /** Jobs admitted and running (their lease has not run out). */
  inFlight: number
  /** Partitions paused by hand. */
  pausedPartitions: number
}

/** A partition of a policy, as `sluice.inspect.partitions(policy)` returns it. */
export interface PartitionRow {
  /** The partition's key ('' for the one partition of a policy without a partition function). */
  partition: string
  /** Jobs waiting to run, due or scheduled, counted up to PENDING_COUNT_LIMIT. */
  pending: number
  /** Jobs admitted and running (their lease has not run out). */
  inFlight: number
  /** Throttle tokens left now; null without a throttle. */
  tokens: number | null
  /** How long until the bucket gains its next whole token; null when full or without a throttle. */
  msUntilNextToken: number | null
  /** The cap on running jobs now: the override, else the lesser of concurrency and adaptive cap; null for none. */
  cap: number | null
  adaptiveCap: number | null
  /** EWMA of the admitted-to-started lag, ms (adaptive partitions). */
  ewmaLagMs: number | null
  paused: boolean
  /** An operator's cap (setPartitionCap), which wins over concurrency and adaptive cap. */
  capOverride: number | null
  /** A handler's "slow down": nothing is admitted before then. */
  slowUntil: Date | null
  lastEnqueuedAt: Date | null
  lastAdmittedAt: Date | null
  /**
   * Why the partition's next waiting job is not running now, in the order the gates are met:
   * "queue paused", "breaker open until <ISO>", "queue held until <ISO>", "partition paused",
   * "slowed down until <ISO>", "not due until <ISO>", "throttled: next token in 2.3 s",
   * "partition at its cap 5/5", "global cap 10/10", "queue at its global cap 8/8". Null when
   * nothing waits or the partition is admissible now.
   */
  reason: string | null
}

/** A partition's numbers for /metrics. */
export interface PartitionMetrics {
  policy: string
  partition: string
  /** Counted up to the scrape's count limit. */
  pending: number
  inFlight: number
  tokens: number | null
  cap: number | null
  ewmaLagSeconds: number | null
  paused: boolean
}

/**
 * Every admission policy with its counts, by name, in one statement
 * (functions/admission_views.sql: admission_policies).
 */
export function policies(t: string): Statement {
  return {
    text: `SELECT name, queue, global_max AS "globalMax", partitions, pending, in_flight AS "inFlight",
       paused_partitions AS "pausedPartitions"
FROM ${t}.admission_policies($1)
ORDER BY name`,
    values: [PENDING_COUNT_LIMIT],
  }
}

/**
 * A page of a policy's partitions by key, each with its counts, its gates' state now and the
 * reason its next waiting job is not running, in one statement (functions/admission_views.sql:
 * admission_partitions, which computes the reason and says in what order the gates are checked).
 */
export function partitions(t: string, policy: string, limit: number, offset: number): Statement {
  return {
    text: `SELECT partition_key AS partition, pending, in_flight AS "inFlight", tokens,
       ms_until_next_token AS "msUntilNextToken", cap, adaptive_cap AS "adaptiveCap", ewma_lag_ms AS "ewmaLagMs",
       paused, cap_override AS "capOverride", slow_until AS "slowUntil", last_enqueued_at AS "lastEnqueuedAt",
       last_admitted_at AS "lastAdmittedAt", reason
FROM ${t}.admission_partitions($1, $2, $3, $4)
ORDER BY partition_key`,
    values: [policy, limit, offset, PENDING_COUNT_LIMIT],
  }
}

/**
 * The SELECT of the partitions /metrics exports: the most recently active (enqueued into or
 * admitted from), at most the value of `limitParam`, waiting jobs counted up to `countLimitParam`
 * each (functions/admission_views.sql: admission_partition_metrics).
 */
export function partitionMetricsSelect(t: string, limitParam: string, countLimitParam: string): string {
  return `SELECT policy, partition_key AS partition, pending::float8 AS pending, in_flight::float8 AS "inFlight",
       tokens, cap::float8 AS cap, ewma_lag_ms / 1000 AS "ewmaLagSeconds", paused
FROM ${t}.admission_partition_metrics(${limitParam}, ${countLimitParam})`
}

/** Sets or lifts a partition's pause; no row when the partition is unknown. */
export function setPartitionPaused(t: string, policy: string, partition: string, paused: boolean): Statement {
  return {
    text: `UPDATE ${t}.partitions SET paused = $3 WHERE policy = $1 AND partition_key = $2 RETURNING policy`,
    values: [policy, partition, paused],
  }
}

/** Sets (or, with null, clears) a partition's cap override; no row when the partition is unknown. */
export function setPartitionCap(t: string, policy: string, partition: string, cap: number | null): Statement {
  return {
    text: `UPDATE ${t}.partitions SET cap_override = $3 WHERE policy = $1 AND partition_key = $2 RETURNING policy`,
    values: [policy, partition, cap],
  }
}

/**
 * Deletes up to `limit` partition rows that have been idle for `idleMs`: no job left, nothing
 * enqueued or admitted for that long, not paused, no cap override, not slowed down, and a full
 * bucket, so that a claim never visits empty partitions one by one. What is lost is only the
 * adaptive cap and lag, which start again from `initial`. A row an enqueue has just written is
 * locked by it (SKIP LOCKED leaves it), and an enqueue that comes after writes the row again.
 * A queue left with no partition loses its place on the ring too.
 */
export function pruneIdlePartitions(t: string, idleMs: number, limit: number): Statement {
  return {
    text: `WITH idle AS (
  SELECT p.policy, p.partition_key FROM ${t}.partitions p
  WHERE NOT p.paused AND p.cap_override IS NULL AND coalesce(p.slow_until, '-infinity') < now()
    AND greatest(coalesce(p.last_enqueued_at, p.created_at), coalesce(p.last_admitted_at, p.created_at))
        < now() - $1::bigint * interval '1 millisecond'
    AND (p.rate IS NULL OR ${t}.admission_tokens(p.tokens, p.refilled_at, p.rate, p.per_ms, p.burst) >= p.burst)
    -- No job, waiting or leased (the admit index holds both).
    AND NOT EXISTS (SELECT 1 FROM ${t}.jobs j WHERE j.policy = p.policy AND j.partition_key = p.partition_key)
  LIMIT $2
  FOR UPDATE OF p SKIP LOCKED
), gone AS (
  DELETE FROM ${t}.partitions p USING idle
  WHERE p.policy = idle.policy AND p.partition_key = idle.partition_key
  RETURNING 1
), placeless AS (
  -- A queue's place on its ring (partition_turns), once no partition is left in the queue but
  -- those deleted here. A partition enqueued meanwhile only starts the queue's next claim at the
  -- beginning of its ring.
  SELECT pt.queue FROM ${t}.partition_turns pt
  WHERE NOT EXISTS (
    SELECT 1 FROM ${t}.partitions p
    WHERE p.queue = pt.queue
      AND NOT EXISTS (SELECT 1 FROM idle WHERE idle.policy = p.policy AND idle.partition_key = p.partition_key))
  FOR UPDATE OF pt SKIP LOCKED
), unplaced AS (
  DELETE FROM ${t}.partition_turns pt USING placeless WHERE pt.queue = placeless.queue
)
SELECT count(*)::int AS n FROM gone`,
    values: [Math.ceil(idleMs), limit],
  }
}
