import type { Statement } from '../db/types.js'

/**
 * How far an estimated count may be off: the half-width of its interval of about 95 % (two
 * standard errors of the block sample it is scaled up from); 0 where the count is exact; null where
 * the sample held too few of the state's rows to bound it, the count then being the exact lower
 * bound that the capped count found (shown as "at least").
 */
export interface OverviewMargins {
  ready: number | null
  scheduled: number | null
  retrying: number | null
}

/** One queue's depth in the overview. */
export interface OverviewQueue {
  queue: string
  /** Due now with attempts left (a failed job whose retry is due, and a lapsed lease, included). */
  ready: number
  /** Not due yet, never run (enqueued with a delay or a run time). */
  scheduled: number
  /** Failed, waiting for the next attempt's time. */
  retrying: number
  /** Leased by a drain whose lease has not run out (always exact: read from the leased index). */
  running: number
  /** Waiting in the blocked table for a concurrency slot (always exact). */
  blocked: number
  /** How long the oldest ready job has been due, seconds; 0 when nothing is ready (always exact). */
  oldestReadyAgeSeconds: number
  /** True when ready, scheduled or retrying is an estimate (see `margin`). */
  estimated: boolean
  /** Per state, 0 where exact, else how far the estimate may be off (see OverviewMargins). */
  margin: OverviewMargins
}

export interface OverviewMinute {
  /** The minute's start, ISO 8601 UTC. */
  minute: string
  completed: number
  /** Attempts that failed (to be retried or dead-lettered). */
  failed: number
}

export interface OverviewDrain {
  id: string
  queues: string[]
  startedAt: string
  expiresAt: string
  /** Since the drain started, seconds. */
  ageSeconds: number
  jobsDone: number
}

/** The dashboard's front page, from one statement (`sluice.inspect.overview()`). */
export interface Overview {
  /** The database's clock. */
  now: string
  queues: OverviewQueue[]
  /** The last 60 minutes, oldest first, every minute present (zeros where nothing finished). */
  throughput: OverviewMinute[]
  /** Finished attempts over the same 60 minutes, by status. */
  lastHour: { completed: number; failed: number; dead: number; expired: number }
  /** Dead letters held; `estimated`: the planner's row estimate, the table being too large to count. */
  deadLetters: { count: number; estimated: boolean }
  /** The drains whose lease is live. */
  drains: OverviewDrain[]
}

export interface OverviewLimits {
  /** Tables of at most this many pages (8 KiB) are counted exactly; larger ones as below. */
  exactPages: number
  /**
   * On a larger table, each queue's ready, not-yet-due and retrying jobs are counted exactly from
   * indexes (index-only scans) while each holds at most this many; a state above it is estimated.
   */
  exactRows: number
  /** About this many pages of a large jobs table are sampled (TABLESAMPLE SYSTEM) for the estimates. */
  samplePages: number
}

/**
 * 6,000 pages (48 MiB; the jobs table's pages are filled to 35 %, so some 50,000 to 100,000 jobs)
 * count in a few ms. Above that, up to 2,000 rows per queue and state are counted from indexes
 * (a few ms for eight queues), and larger states are scaled up from 300 sampled pages with their
 * error measured on the same sample (p95 under 100 ms at 1M jobs; 400 pages measured 105).
 */
export const OVERVIEW_LIMITS: OverviewLimits = { exactPages: 6_000, exactRows: 2_000, samplePages: 300 }

/**
 * Every figure of the overview in one statement, whose cost is bounded whatever the table's size.
 *
 * A table of at most `exactPages` is counted. On a larger one, each queue's states are counted
 * exactly from indexes while they are small: the due and not-yet-due jobs of each (queue,
 * priority) range of jobs_ready (and of each admission policy on jobs_admit), and the retrying
 * ones on jobs_retrying, each scan stopping after `exactRows` rows; running jobs and lapsed last
 * attempts, few, are counted on their lease rows (the view leased_jobs). The ranges hold leased
 * jobs too, all due (a lease keeps its job's place): ready is the due jobs less the running and
 * lapsed ones, scheduled the not-yet-due jobs less the retrying ones. A state whose count reached the cap
 * is estimated from a block sample (TABLESAMPLE SYSTEM, each block taken with probability p): the
 * Horvitz-Thompson sum of the sampled blocks' counts over p, whose variance is estimated from the
 * same blocks as (1 - p) / p² · Σ y², y the state's rows in a block. That variance grows when a
 * queue's rows are clustered on few pages (loaded by enqueueMany in chunks), so the stated
 * margin, two standard errors, widens exactly where a block sample is weakest. An estimate is
 * never below the exact lower bound the capped scans found.
 *
 * The oldest ready plain job per (queue, priority) comes from the jobs_ready index, a loose scan
 * over the distinct pairs, one probe each; the oldest ready job of an admission policy is the
 * oldest in the sample on a large table. Throughput reads the last hour of job_stats (BRIN on
 * finished_at); the archive is never read.
 */
export function overview(
  t: string,
  schema: string,
  knownQueues: readonly string[],
  limits: OverviewLimits,
): Statement {
  return {
    text: `SELECT * FROM ${t}.overview($1, $2, $3, $4, $5)`,
    values: [knownQueues, schema, limits.exactPages, limits.samplePages, limits.exactRows],
  }
}
