import type { MaintenanceTask } from '../maintain/maintain.js'
import { readyBacklog } from '../sql/wake.js'
import { type WakeOptions, wake } from './send.js'

/**
 * Maintenance's wake-ups: for every queue with due jobs, as many drains as its backlog
 * needs (one per `jobsPerDrain`, at most `maxParallel`). Returns the drains woken.
 */
export function wakeTask(
  options: Readonly<WakeOptions>,
  queues: readonly string[],
  intervalMs: number,
): MaintenanceTask {
  return {
    name: 'wake-drains',
    intervalMs,
    async run({ db, t }) {
      if (!options.url || queues.length === 0) return 0
      const { rows } = await db.query<{ queue: string; n: number }>(
        readyBacklog(t, queues, options.jobsPerDrain * options.maxParallel),
      )
      const woken = await Promise.all(
        rows.map((row) =>
          wake(options, row.queue, Math.min(options.maxParallel, Math.ceil(row.n / options.jobsPerDrain))),
        ),
      )
      return woken.reduce((a, b) => a + b, 0)
    },
  }
}
