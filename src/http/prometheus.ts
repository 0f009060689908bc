import type { QueueMetrics } from '../sql/metrics.js'

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

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

/** Renders per-queue metrics as Prometheus text: one gauge family per measure, one sample per queue. */
export function toPrometheus(metrics: readonly QueueMetrics[]): string {
  const lines: string[] = []
  for (const gauge of GAUGES) {
    lines.push(`# HELP ${gauge.name} ${gauge.help}`, `# TYPE ${gauge.name} gauge`)
    for (const m of metrics) {
      lines.push(`${gauge.name}{queue="${escapeLabel(m.queue)}"} ${formatValue(gauge.value(m))}`)
    }
  }
  return `${lines.join('\n')}\n`
}
