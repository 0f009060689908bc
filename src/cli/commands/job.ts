import { parseJobId } from '../../controls/jobs.js'
import type { JobDetail } from '../../inspect.js'
import { defineCommand } from '../command.js'
import { EXIT, UsageError } from '../errors.js'
import { duration, table, truncate } from '../output.js'

interface Args {
  id: string
}

interface Result {
  id: string
  job: JobDetail | null
}

const bytes = (n: number | null): string =>
  n === null ? '' : n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`

export const job = defineCommand<Args, Result>({
  name: 'job',
  summary: 'one job wherever it is: its state, why it waits, its steps and its result',
  usage: 'sluice job <id>',
  help: `Shows one job, waiting, running, archived or dead-lettered: its state and why it is not
running, its durable steps in order (name, kind, state, attempts, duration, result size, error),
its attempts, and, once completed, the result its handler returned (as JSON).
With --json, the whole job as the admin API's GET /jobs/:id answers it.
Exits 1 when no job has this id (never enqueued, cancelled, or pruned from the archive).`,
  options: {},
  needsSchema: true,
  parse({ positionals }) {
    const [id, ...extra] = positionals
    if (!id) throw new UsageError('job needs a job id.', 'Example: sluice job 42')
    if (extra.length) throw new UsageError(`Unexpected argument "${extra[0]}".`, 'sluice job takes one id.')
    try {
      return { id: parseJobId(id) }
    } catch (error) {
      throw new UsageError((error as Error).message, 'Job ids are the positive integers enqueue answers.')
    }
  },
  run: async ({ sluice }, { id }) => ({ id, job: await sluice.inspect.job(id) }),
  render({ id, job }) {
    if (!job) return `No job ${id}: never enqueued, cancelled, or pruned from the archive.`
    const lines = [
      `Job ${job.id} (${job.name} on ${job.queue}): ${job.state}${job.reason ? ` — ${job.reason}` : ''}`,
      `  attempts ${job.attempts} of ${job.maxAttempts}, enqueued ${new Date(job.enqueuedAt).toISOString()}`,
    ]
    if (job.steps.length > 0) {
      lines.push('Steps:')
      lines.push(
        table(
          ['#', 'step', 'kind', 'state', 'attempts', 'took', 'result', 'error / waits for'],
          job.steps.map((s) => [
            s.seq + 1,
            s.name,
            s.kind,
            s.state,
            s.attempts,
            s.durationMs === null ? '' : duration(s.durationMs),
            bytes(s.resultBytes),
            s.error?.message
              ? truncate(s.error.message, 60)
              : s.state === 'waiting'
                ? s.kind === 'event'
                  ? `${s.topic} ${JSON.stringify(s.match)}`
                  : `job ${s.childId}`
                : s.kind === 'sleep' && s.wakeAt
                  ? `until ${s.wakeAt}`
                  : '',
          ]),
        ),
      )
    }
    if (job.state === 'completed')
      lines.push(`Result: ${truncate(JSON.stringify(job.result) ?? 'null', 2000)}`)
    if (job.state === 'dead' && job.lastError) lines.push(`Last error: ${job.lastError.message ?? ''}`)
    return lines.join('\n')
  },
  exitCode: (r) => (r.job ? EXIT.OK : EXIT.FAILED),
})
