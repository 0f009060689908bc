import type { Statement } from '../db/types.js'
import { type PartitionMetrics, partitionMetricsSelect } from './admission.js'

/** The depth of one queue at one moment, as `sluice.metrics()` reports it. */
export interface QueueMetrics {
  queue: string
  /** Due now and claimable: `run_at <= now()` with attempts left (including jobs whose lease ran out). */
  ready: number
  /** Waiting for their run_at: enqueued with a delay, or backing off before a retry. */
  delayed: number
  /** Of the delayed, those backing off before a retry (failed at least once). */
  retrying: number
  /** Claimed by a drain whose lease has not run out. */
  inFlight: number
  deadLettered: number
  /** How long the oldest ready job has been due, seconds; 0 when nothing is ready. */
  oldestReadyAgeSeconds: number
  /** Waiting for a concurrency slot. */
  blocked: number
  /** Paused by hand, or by its circuit breaker until `breakerUntil`. */
  paused: boolean
  breakerUntil: Date | null
}

/** The SELECT of every queue's depth; `$1` is the known queues. */
function queueMetricsSelect(t: string): string {
  return `WITH j AS (
  SELECT queue,
         count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts
                          AND (lease_token IS NULL OR lease_until <= now())) AS ready,
         count(*) FILTER (WHERE lease_token IS NULL AND run_at > now()) AS delayed,
         count(*) FILTER (WHERE lease_token IS NULL AND run_at > now() AND last_error IS NOT NULL) AS retrying,
         count(*) FILTER (WHERE lease_token IS NOT NULL AND lease_until > now()) AS in_flight,
         min(run_at) FILTER (WHERE run_at <= now() AND attempts < max_attempts
                             AND (lease_token IS NULL OR lease_until <= now())) AS oldest_ready
  FROM ${t}.jobs
  GROUP BY queue
), d AS (
  SELECT queue, count(*) AS dead FROM ${t}.dead_letters GROUP BY queue
), b AS (
  SELECT queue, count(*) AS blocked FROM ${t}.blocked GROUP BY queue
), q AS (
  SELECT unnest($1::text[]) AS queue UNION SELECT queue FROM j UNION SELECT queue FROM d
)
SELECT q.queue,
       coalesce(j.ready, 0)::float8 AS "ready",
       coalesce(j.delayed, 0)::float8 AS "delayed",
       coalesce(j.retrying, 0)::float8 AS "retrying",
       coalesce(j.in_flight, 0)::float8 AS "inFlight",
       coalesce(d.dead, 0)::float8 AS "deadLettered",
       coalesce(greatest(extract(epoch FROM now() - j.oldest_ready), 0), 0)::float8 AS "oldestReadyAgeSeconds",
       coalesce(b.blocked, 0)::float8 AS "blocked",
       coalesce(c.paused, false) AS "paused",
       CASE WHEN c.breaker_until > now() THEN c.breaker_until END AS "breakerUntil"
FROM q LEFT JOIN j ON j.queue = q.queue LEFT JOIN d ON d.queue = q.queue LEFT JOIN b ON b.queue = q.queue
LEFT JOIN ${t}.queues c ON c.name = q.queue`
}

/**
 * Every queue's depth in one statement: the queues given (those of the defined jobs, shown
 * even when empty) plus any queue that has rows. Counts walk the queues' rows, so this is
 * meant for a scrape every few seconds, not for the hot path.
 */
export function queueMetrics(t: string, knownQueues: readonly string[]): Statement {
  return { text: `${queueMetricsSelect(t)}\nORDER BY q.queue`, values: [knownQueues] }
}

/** /metrics exports this many partitions at most: the most recently active. */
export const METRICS_PARTITION_LIMIT = 500
/** /metrics counts a partition's waiting jobs up to this many. */
export const METRICS_PENDING_LIMIT = 1_000

/** What /metrics exports, from one statement. */
export interface Scrape {
  queues: QueueMetrics[]
  partitions: PartitionMetrics[]
}

/**
 * Everything /metrics exports in one statement: every queue's depth (as queueMetrics) and the
 * METRICS_PARTITION_LIMIT most recently active partitions of admission policies. Each comes as
 * one JSON array (timestamps are ISO strings there).
 */
export function scrape(t: string, knownQueues: readonly string[]): Statement {
  return {
    text: `SELECT (SELECT coalesce(json_agg(m ORDER BY m.queue), '[]'::json) FROM (${queueMetricsSelect(t)}) m) AS queues,
       (SELECT coalesce(json_agg(p ORDER BY p.policy, p.partition), '[]'::json)
        FROM (${partitionMetricsSelect(t, '$2', '$3')}) p) AS partitions`,
    values: [knownQueues, METRICS_PARTITION_LIMIT, METRICS_PENDING_LIMIT],
  }
}
