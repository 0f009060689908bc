import * as z from 'zod'
import type { DrainSummary, JobRun } from '../../drain/options.js'
import { findUnknownQueue } from '../../drain/queues.js'
import { intFlag, listFlag, nameFlag, validate } from '../args.js'
import { defineCommand, noPositionals } from '../command.js'
import { EXIT } from '../errors.js'
import { endInvocation } from '../invocation.js'
import { formatRun } from '../job-log.js'
import { count, duration } from '../output.js'
import { unknownQueue } from '../suggest.js'

interface Args {
  queues?: string[]
  budgetMs?: number
  maxJobs?: number
  concurrency?: number
}

/** At most this many runs are listed in the result; the counts cover all of them. */
const MAX_LISTED = 1_000

type Result = DrainSummary & { runs: JobRun[]; runsNotListed: number }

const flags = z.object({
  queues: listFlag(nameFlag).optional(),
  budget: intFlag(1, 3_600_000).optional(),
  'max-jobs': intFlag(1, 1_000_000).optional(),
  concurrency: intFlag(1, 1000).optional(),
})

const STOPPED: Record<string, string> = {
  empty: 'the queues are empty',
  deadline: 'the time budget ran out',
  maxJobs: 'it reached --max-jobs',
  stopped: 'it was interrupted',
}

export const drain = defineCommand<Args, Result>({
  name: 'drain',
  summary: 'run due jobs now, like one drain invocation',
  usage: 'sluice drain [--queues a,b] [--budget ms] [--max-jobs n] [--concurrency n]',
  help: `Claims due jobs and runs their handlers in this process, settling them as the drain
function would, until the queues are empty, the budget runs out or --max-jobs is reached.
Lists every run (name, id, attempt, outcome, duration), then the counts.

  --queues a,b      queues to drain (default: every queue of the app's jobs)
  --budget ms       longest the drain runs (default: the config's, normally 55000)
  --max-jobs n      stop after claiming this many jobs
  --concurrency n   handlers running at once (default: the config's, normally 10)

Jobs that fail are retried or dead-lettered as usual and do not change the exit code:
read "failed" in the --json output. Ctrl-C (or SIGTERM) stops claiming: the jobs running
finish and settle, those claimed but not started go back, and it exits 130; a second Ctrl-C quits at once (the jobs that were
running are retried once their lease runs out). Either way the drain's invocation ends.`,
  options: {
    queues: { type: 'string', multiple: true },
    budget: { type: 'string' },
    'max-jobs': { type: 'string' },
    concurrency: { type: 'string' },
  },
  needsSchema: true,
  parse(parsed) {
    noPositionals('drain', parsed)
    const v = validate('drain', flags, parsed.values)
    return {
      ...(v.queues ? { queues: v.queues } : {}),
      ...(v.budget !== undefined ? { budgetMs: v.budget } : {}),
      ...(v['max-jobs'] !== undefined ? { maxJobs: v['max-jobs'] } : {}),
      ...(v.concurrency !== undefined ? { concurrency: v.concurrency } : {}),
    }
  },
  async run({ sluice, interrupt }, args) {
    const unknown = findUnknownQueue(args.queues ?? [], sluice.config.queues)
    if (unknown) throw unknownQueue(unknown.queue, sluice.config.queues)
    const runs: JobRun[] = []
    let runsNotListed = 0
    // Chosen here so that it can be ended when the drain cannot end it itself.
    const invocationId = `drn_${crypto.randomUUID()}`
    interrupt?.onQuit(() => endInvocation(sluice, invocationId))
    let summary: DrainSummary
    try {
      summary = await sluice.drain({
        ...args,
        invocationId,
        ...(interrupt ? { signal: interrupt.signal } : {}),
        onJob: (run) => {
          if (runs.length < MAX_LISTED) runs.push(run)
          else runsNotListed++
        },
      })
    } catch (error) {
      await endInvocation(sluice, invocationId).catch(() => {})
      throw error
    }
    return { ...summary, runs, runsNotListed }
  },
  interruptible: true,
  exitCode: (r) => (r.stoppedBy === 'stopped' ? EXIT.INTERRUPTED : EXIT.OK),
  render(r) {
    const lines = r.runs.map((run) => formatRun(run, false))
    if (r.runsNotListed) lines.push(`… and ${count(r.runsNotListed, 'more run')}`)
    const tally = [
      `${r.completed} completed`,
      `${r.retried} retried`,
      `${r.deadLettered} dead-lettered`,
      ...(r.expired ? [`${r.expired} expired`] : []),
      ...(r.handedBack ? [`${r.handedBack} handed back`] : []),
      ...(r.suspended ? [`${r.suspended} suspended`] : []),
      ...(r.lostLeases ? [count(r.lostLeases, 'lost lease')] : []),
    ]
    lines.push(
      r.claimed === 0
        ? `Nothing was due on ${r.queues.join(', ') || 'any queue'}.`
        : `Drained ${count(r.claimed, 'job')} from ${r.queues.join(', ')} in ${duration(r.durationMs)}: ${tally.join(', ')}.`,
    )
    if (r.claimed > 0)
      lines.push(
        `Stopped because ${STOPPED[r.stoppedBy] ?? r.stoppedBy}; ${count(r.remainingReady, 'due job')} left.`,
      )
    return lines.join('\n')
  },
})
