import { latestVersion } from '../../migrate/run.js'
import type { QueueMetrics } from '../../sql/metrics.js'
import type { InvocationRow, MaintenanceRow } from '../../sql/status.js'
import { defineCommand, noPositionals } from '../command.js'
import { dueIn, relative, table, truncate } from '../output.js'
import { queueTable } from './queues.js'

interface Result {
  database: string
  schema: string
  version: number
  latestVersion: number
  checkedAt: string
  jobs: { name: string; queue: string }[]
  queues: QueueMetrics[]
  invocations: InvocationRow[]
  maintenance: MaintenanceRow[]
}

export const status = defineCommand<Record<string, never>, Result>({
  name: 'status',
  summary: 'the database, queues, running drains and maintenance at a glance',
  usage: 'sluice status',
  help: `Shows where Sluice runs (database, schema, version), the app's jobs, the depth of
every queue, the drains running now (invocations) and each maintenance task's last run.`,
  options: {},
  needsSchema: true,
  parse(parsed) {
    noPositionals('status', parsed)
    return {}
  },
  async run({ sluice, where }) {
    const row = await sluice.inspect.status()
    const queues = await sluice.inspect.queues()
    return {
      database: where,
      schema: sluice.config.schema,
      version: row.version,
      latestVersion: latestVersion(),
      checkedAt: row.now,
      jobs: [...sluice.config.jobs.values()].map((j) => ({ name: j.name, queue: j.queue })),
      queues,
      invocations: row.invocations,
      maintenance: row.maintenance,
    }
  },
  render(r) {
    const now = new Date(r.checkedAt).getTime()
    const lines = [
      `Sluice on ${r.database}, schema "${r.schema}" (version ${r.version}${r.version < r.latestVersion ? `, ${r.latestVersion} available: run sluice migrate` : ''})`,
      `Jobs: ${r.jobs.map((j) => `${j.name} (${j.queue})`).join(', ') || '(none)'}`,
      '',
      'Queues',
      queueTable(r.queues),
      '',
      'Drains running',
      table(
        ['invocation', 'queues', 'started', 'lease ends', 'jobs'],
        r.invocations.map((i) => [
          i.id,
          i.queues.join(','),
          relative(i.startedAt, now),
          i.live ? relative(i.expiresAt, now) : `${relative(i.expiresAt, now)} (dead)`,
          i.jobsDone,
        ]),
      ),
      '',
      'Maintenance',
      r.maintenance.length
        ? table(
            ['task', 'last run', 'next due', 'rows', 'last error'],
            r.maintenance.map((m) => [
              m.task,
              relative(m.lastStartedAt, now),
              dueIn(m.nextRunAt, now),
              m.lastRows ?? '—',
              m.lastError ? truncate(m.lastError, 60) : '',
            ]),
          )
        : '  (never ran: sluice maintain, or the cron function)',
    ]
    return lines.join('\n')
  },
})
