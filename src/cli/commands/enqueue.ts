import { readFileSync } from 'node:fs'
import * as z from 'zod'
import type { EnqueueResult } from '../../jobs/enqueue.js'
import { intFlag, validate } from '../args.js'
import { defineCommand } from '../command.js'
import { describeInput } from '../describe-input.js'
import { CliError, EXIT, UsageError } from '../errors.js'
import { notEnqueueable, unknownJob } from '../suggest.js'

interface Args {
  job: string
  input: unknown
  delay?: number
  runAt?: string
  priority?: number
}

interface Result {
  /** Null when uniqueness or a concurrency limit's discard policy made the enqueue a no-op. */
  id: string | null
  status: EnqueueResult['status']
  existingId?: string
  job: string
  queue: string
}

const flags = z.object({
  delay: intFlag(0, 10 * 365 * 86_400_000).optional(),
  'run-at': z.iso
    .datetime({ offset: true, message: 'must be an ISO 8601 time with a zone, e.g. 2026-01-31T09:00:00Z' })
    .optional(),
  priority: intFlag(0, 32767).optional(),
})

function parseInput(job: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new UsageError(
      `The input for ${job} is not valid JSON: ${(error as Error).message}.`,
      `Quote it for the shell: sluice enqueue ${job} '{"key": "value"}' (or pass - to read it from stdin).`,
    )
  }
}

export const enqueue = defineCommand<Args, Result>({
  name: 'enqueue',
  summary: 'add a job: sluice enqueue <job> <json>',
  usage: 'sluice enqueue <job> <json|-> [--delay ms] [--run-at time] [--priority n]',
  help: `Validates <json> against the job's input schema and enqueues it. Pass - to read the
JSON from stdin.

  --delay ms        run no sooner than this many milliseconds from now
  --run-at time     run no sooner than this moment (ISO 8601 with a zone); wins over --delay
  --priority n      0..32767, lower runs first (default: the job's own, normally 16384)

Example:
  sluice enqueue welcome-email '{"userId": "u_1", "email": "ada@example.com"}'`,
  options: {
    delay: { type: 'string' },
    'run-at': { type: 'string' },
    priority: { type: 'string' },
  },
  needsSchema: true,
  parse({ values, positionals }) {
    const [job, text, ...extra] = positionals
    if (!job || text === undefined) {
      throw new UsageError(
        job ? `enqueue needs ${job}'s input, as JSON.` : 'enqueue needs a job name and its JSON input.',
        `Quote it for the shell: sluice enqueue ${job ?? '<job>'} '{"key": "value"}' (or pass - to read it from stdin).`,
      )
    }
    if (extra.length)
      throw new UsageError(`Unexpected argument "${extra[0]}".`, 'Quote the JSON input as one argument.')
    const v = validate('enqueue', flags, values)
    const input = parseInput(job, text === '-' ? readFileSync(0, 'utf8') : text)
    return {
      job,
      input,
      ...(v.delay !== undefined ? { delay: v.delay } : {}),
      ...(v['run-at'] !== undefined ? { runAt: v['run-at'] } : {}),
      ...(v.priority !== undefined ? { priority: v.priority } : {}),
    }
  },
  async run({ sluice }, args) {
    const job = sluice.config.jobs.get(args.job)
    if (!job) throw unknownJob(args.job, [...sluice.config.jobs.values()])
    if (job.subscriber) throw notEnqueueable(job.name, job.subscriber.topic)
    try {
      const result = await sluice.enqueue(job.name, args.input, {
        ...(args.delay !== undefined ? { delay: args.delay } : {}),
        ...(args.runAt !== undefined ? { runAt: args.runAt } : {}),
        ...(args.priority !== undefined ? { priority: args.priority } : {}),
      })
      return { ...result, job: job.name, queue: job.queue }
    } catch (error) {
      const e = error as {
        code?: string
        message?: string
        issues?: { path: (string | number)[]; message: string }[]
      }
      if (e.code === 'INVALID_INPUT' && e.issues?.length) {
        const shape = describeInput(job.input)
        throw new CliError(e.message ?? 'Invalid input', {
          code: 'INVALID_INPUT',
          exitCode: EXIT.USAGE,
          issues: e.issues,
          ...(shape ? { hint: `${job.name} takes ${shape}` } : {}),
        })
      }
      throw error
    }
  },
  render: (r) =>
    r.status === 'duplicate'
      ? `Not enqueued: a ${r.job} job with the same unique key is already queued or running (job ${r.existingId}).`
      : r.status === 'discarded'
        ? `Not enqueued: ${r.job} is at its concurrency limit and discards the rest.`
        : r.status === 'blocked'
          ? `Enqueued ${r.job} on queue ${r.queue}: job ${r.id}, waiting for a concurrency slot.`
          : `Enqueued ${r.job} on queue ${r.queue}: job ${r.id}.`,
})
