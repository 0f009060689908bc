import type { PartitionMetrics } from '../sql/admission.js'
import { METRICS_PARTITION_LIMIT, METRICS_PENDING_LIMIT, type QueueMetrics } from '../sql/metrics.js'

/** The content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

interface Gauge {
  name: string
  help: string
  value: (m: QueueMetrics) => number
}

const GAUGES: readonly Gauge[] = [
  { name: 'sluice_jobs_ready', help: 'Jobs due now and waiting to be claimed.', value: (m) => m.ready },
  {
    name: 'sluice_jobs_delayed',
    help: 'Jobs waiting for their run time (delayed or backing off before a retry).',
    value: (m) => m.delayed,
  },
  {
    name: 'sluice_jobs_in_flight',
    help: 'Jobs claimed by a drain whose lease has not run out.',
    value: (m) => m.inFlight,
  },
  {
    name: 'sluice_jobs_dead_lettered',
    help: 'Jobs in the dead letter queue.',
    value: (m) => m.deadLettered,
  },
  {
    name: 'sluice_jobs_blocked',
    help: 'Jobs waiting for a concurrency slot.',
    value: (m) => m.blocked,
  },
  {
    name: 'sluice_queue_paused',
    help: '1 while the queue is paused by hand or by its circuit breaker, else 0.',
    value: (m) => (m.paused || m.breakerUntil !== null ? 1 : 0),
  },
  {
    name: 'sluice_oldest_ready_age_seconds',
    help: 'How long the oldest ready job has been due, in seconds (0 when none is ready).',
    value: (m) => m.oldestReadyAgeSeconds,
  },
]

/** Escapes a label value: backslash, double quote and line feed, as the format requires. */
export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

/** Escapes HELP text: backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

interface PartitionGauge {
  name: string
  help: string
  /** Null: no sample for this partition (it has no such gate). */
  value: (m: PartitionMetrics) => number | null
}

const EXPORTED = `Only the ${METRICS_PARTITION_LIMIT} most recently active partitions (by last enqueue or admission) are exported.`

const PARTITION_GAUGES: readonly PartitionGauge[] = [
  {
    name: 'sluice_partition_pending',
    help: `Jobs of an admission partition waiting to run, due or scheduled (counted up to ${METRICS_PENDING_LIMIT}).`,
    value: (m) => m.pending,
  },
  {
    name: 'sluice_partition_in_flight',
    help: 'Jobs of an admission partition admitted and running (lease not run out).',
    value: (m) => m.inFlight,
  },
  {
    name: 'sluice_partition_tokens',
    help: 'Throttle tokens an admission partition has left now (partitions with a throttle).',
    value: (m) => m.tokens,
  },
  {
    name: 'sluice_partition_cap',
    help: "An admission partition's cap on running jobs: the operator's override, else the lesser of its concurrency and adaptive cap (partitions with a cap).",
    value: (m) => m.cap,
  },
  {
    name: 'sluice_partition_ewma_lag_seconds',
    help: "EWMA of an admission partition's lag from admission to start, in seconds (adaptive partitions).",
    value: (m) => m.ewmaLagSeconds,
  },
  {
    name: 'sluice_partition_paused',
    help: '1 while the admission partition is paused by hand, else 0.',
    value: (m) => (m.paused ? 1 : 0),
  },
]

/**
 * Renders per-queue metrics as Prometheus text: one gauge family per measure, one sample per
 * queue; then, when there are any, the partitions' gauges, labelled by policy and partition.
 */
export function toPrometheus(
  metrics: readonly QueueMetrics[],
  partitions: readonly PartitionMetrics[] = [],
): string {
  const lines: string[] = []
  for (const gauge of GAUGES) {
    lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`)
    for (const m of metrics) {
      lines.push(`${gauge.name}{queue="${escapeLabel(m.queue)}"} ${formatValue(gauge.value(m))}`)
    }
  }
  if (partitions.length > 0) {
    for (const gauge of PARTITION_GAUGES) {
      lines.push(
        `# HELP ${gauge.name} ${escapeHelp(`${gauge.help} ${EXPORTED}`)}`,
        `# TYPE ${gauge.name} gauge`,
      )
      for (const m of partitions) {
        const value = gauge.value(m)
        if (value === null) continue
        lines.push(
          `${gauge.name}{policy="${escapeLabel(m.policy)}",partition="${escapeLabel(m.partition)}"} ${formatValue(value)}`,
        )
      }
    }
  }
  return `${lines.join('\n')}\n`
}
