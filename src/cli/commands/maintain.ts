import type { MaintenanceReport } from '../../maintain/maintain.js'
import { defineCommand, noPositionals } from '../command.js'
import { EXIT } from '../errors.js'
import { table } from '../output.js'

export const maintain = defineCommand<Record<string, never>, MaintenanceReport>({
  name: 'maintain',
  summary: 'run the maintenance tasks that are due',
  usage: 'sluice maintain',
  help: `Runs the maintenance tasks that are due, as the cron-triggered function does: reap
dead drains' leases, dead-letter jobs whose last attempt never settled, prune the archive.
A task that ran recently (from cron or \`sluice dev\`) is skipped until its interval passes.
Exits 1 when a task failed.`,
  options: {},
  needsSchema: true,
  parse(parsed) {
    noPositionals('maintain', parsed)
    return {}
  },
  run: ({ sluice }) => sluice.maintain(),
  render(r) {
    const rows = r.tasks.map((t) => [
      t.task,
      t.ran ? 'ran' : 'skipped (not due)',
      t.rows,
      `${t.ms} ms`,
      t.error ?? '',
    ])
    return `Maintenance at ${r.ranAt}\n${table(['task', 'status', 'rows', 'took', 'error'], rows)}`
  },
  exitCode: (r) => (r.tasks.some((t) => t.error) ? EXIT.FAILED : EXIT.OK),
})
