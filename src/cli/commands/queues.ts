import type { QueueMetrics } from '../../sql/metrics.js'
import { defineCommand, noPositionals } from '../command.js'
import { duration, table } from '../output.js'

interface Result {
  queues: QueueMetrics[]
}

export function queueTable(queues: readonly QueueMetrics[]): string {
  return table(
    ['queue', 'ready', 'delayed', 'in flight', 'blocked', 'dead-lettered', 'oldest ready', 'paused'],
    queues.map((q) => [
      q.queue,
      q.ready,
      q.delayed,
      q.inFlight,
      q.blocked,
      q.deadLettered,
      q.ready > 0 ? duration(q.oldestReadyAgeSeconds * 1_000) : '—',
      q.paused ? 'yes' : q.breakerUntil ? `breaker until ${new Date(q.breakerUntil).toISOString()}` : 'no',
    ]),
  )
}

export const queues = defineCommand<Record<string, never>, Result>({
  name: 'queues',
  summary: 'depth of every queue: ready, delayed, in flight, blocked, dead-lettered, oldest ready, paused',
  usage: 'sluice queues',
  help: `Per queue: jobs ready to run, delayed (scheduled or backing off before a retry), in
flight (claimed by a drain), blocked (waiting for a concurrency slot), dead-lettered, how
long the oldest ready job has waited, and whether the queue is paused (by hand or by its
circuit breaker).
Queues of the app's jobs are listed even when empty. One statement.`,
  options: {},
  needsSchema: true,
  parse(parsed) {
    noPositionals('queues', parsed)
    return {}
  },
  run: async ({ sluice }) => ({ queues: await sluice.inspect.queues() }),
  render: (r) => queueTable(r.queues),
})
