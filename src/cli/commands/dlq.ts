import * as z from 'zod'
import type { DeadLetterQuery, Sluice } from '../../sluice.js'
import type { DeadLetterRow, KeptDeadLetter } from '../../sql/dead-letters.js'
import { idFlag, intFlag, listFlag, nameFlag, validate } from '../args.js'
import { defineCommand } from '../command.js'
import { EXIT, UsageError } from '../errors.js'
import { relative, table, truncate } from '../output.js'

type Action = 'list' | 'retry' | 'discard'

interface Args {
  action: Action
  ids?: string[]
  queue?: string
  name?: string
  all: boolean
  limit?: number
}

type Result =
  | { action: 'list'; deadLetters: DeadLetterRow[] }
  | { action: 'retry'; ids: string[]; kept: KeptDeadLetter[]; missing: string[] }
  | { action: 'discard'; ids: string[]; missing: string[] }

/** Slice size of bulk retry and discard: the library's own per-call bound. */
const SLICE = 1_000

const flags = z.object({
  id: listFlag(idFlag).optional(),
  queue: z.optional(nameFlag),
  name: z.optional(nameFlag),
  all: z.boolean().optional(),
  limit: intFlag(1, 1_000_000).optional(),
})

export const dlq = defineCommand<Args, Result>({
  name: 'dlq',
  summary: 'dead letters: list, retry or discard them',
  usage: 'sluice dlq list|retry|discard [--id n[,n…]] [--queue q] [--name job] [--all] [--limit n]',
  help: `Dead letters are jobs that ran out of attempts (or failed permanently); they keep their
payload and their last errors.

  list      newest first (default limit 100)
  retry     back to their queue, due now, attempts reset, error history kept; one whose
            unique key is held by another job (or whose concurrency key is full) is kept
            as a dead letter, and said so with the reason
  discard   delete them

  --id n[,n…]   these dead letters (repeatable)
  --queue q     those of this queue
  --name job    those of this job
  --all         every dead letter (retry and discard need a filter or --all)
  --limit n     at most this many

retry and discard exit 1 when an --id matched no dead letter; retry also when it kept one.`,
  options: {
    id: { type: 'string', multiple: true },
    queue: { type: 'string' },
    name: { type: 'string' },
    all: { type: 'boolean' },
    limit: { type: 'string' },
  },
  needsSchema: true,
  parse({ values, positionals }) {
    const [action, ...extra] = positionals
    if (action !== 'list' && action !== 'retry' && action !== 'discard') {
      throw new UsageError(
        action ? `Unknown dlq action "${action}".` : 'dlq needs an action.',
        'Use `sluice dlq list`, `sluice dlq retry …` or `sluice dlq discard …`.',
      )
    }
    if (extra.length) throw new UsageError(`Unexpected argument "${extra[0]}".`, 'Run `sluice dlq --help`.')
    const v = validate('dlq', flags, values)
    const filtered = v.id !== undefined || v.queue !== undefined || v.name !== undefined
    if (action !== 'list' && !filtered && !v.all) {
      throw new UsageError(
        `Say which dead letters to ${action}.`,
        `Pass --id, --queue or --name, or --all for every one: sluice dlq ${action} --all`,
      )
    }
    if (v.all && filtered) throw new UsageError('--all does not combine with --id, --queue or --name.')
    if (action === 'list' && v.limit !== undefined && v.limit > 10_000)
      throw new UsageError(
        '--limit must be at most 10000 for list.',
        'Page with --id filters, or use --json and a script.',
      )
    return {
      action,
      all: v.all === true,
      ...(v.id ? { ids: [...new Set(v.id)] } : {}),
      ...(v.queue ? { queue: v.queue } : {}),
      ...(v.name ? { name: v.name } : {}),
      ...(v.limit !== undefined ? { limit: v.limit } : {}),
    }
  },
  async run({ sluice }, args) {
    const filter: DeadLetterQuery = {
      ...(args.ids ? { ids: args.ids } : {}),
      ...(args.queue ? { queue: args.queue } : {}),
      ...(args.name ? { name: args.name } : {}),
    }
    if (args.action === 'list') {
      return {
        action: 'list',
        deadLetters: await sluice.inspect.deadLetters({ ...filter, limit: args.limit ?? 100 }),
      }
    }
    return args.action === 'retry' ? retryAll(sluice, filter, args) : discardAll(sluice, filter, args)
  },
  render(r) {
    if (r.action === 'list') {
      if (r.deadLetters.length === 0) return 'No dead letters.'
      return table(
        ['id', 'job', 'queue', 'attempts', 'failed', 'last error'],
        r.deadLetters.map((d) => [
          d.id,
          d.name,
          d.queue,
          `${d.attempts}/${d.maxAttempts}`,
          relative(String(d.failedAt)),
          truncate(`${d.lastError?.name ? `${d.lastError.name}: ` : ''}${d.lastError?.message ?? ''}`, 80),
        ]),
      )
    }
    const verb = r.action === 'retry' ? 'Retried' : 'Discarded'
    const kept = r.action === 'retry' ? r.kept : []
    const lines = [
      r.ids.length
        ? `${verb} ${plural(r.ids.length)}${r.ids.length <= 20 ? `: ${r.ids.join(', ')}` : ''}.`
        : kept.length
          ? 'Nothing retried.'
          : `No dead letters matched; nothing ${r.action === 'retry' ? 'retried' : 'discarded'}.`,
    ]
    if (r.action === 'retry' && r.ids.length) lines.push('They are due now: a drain will pick them up.')
    if (kept.length) {
      lines.push(`Kept ${plural(kept.length)} where ${kept.length === 1 ? 'it was' : 'they were'}:`)
      for (const k of kept.slice(0, 20)) lines.push(`  ${k.id}: ${k.reason}`)
      if (kept.length > 20) lines.push(`  … and ${kept.length - 20} more (--json lists them all).`)
    }
    if (r.missing.length) lines.push(`No dead letter with id ${r.missing.join(', ')}.`)
    return lines.join('\n')
  },
  exitCode: (r) =>
    r.action !== 'list' && (r.missing.length || (r.action === 'retry' && r.kept.length))
      ? EXIT.FAILED
      : EXIT.OK,
})

const plural = (n: number): string => `${n} dead letter${n === 1 ? '' : 's'}`

/**
 * Retries in the library's bounded slices, newest first, until nothing matches or the limit is
 * reached; each slice starts below the last one, so dead letters kept in place are not met again.
 */
async function retryAll(sluice: Sluice, filter: DeadLetterQuery, args: Args): Promise<Result> {
  const ids: string[] = []
  const kept: KeptDeadLetter[] = []
  const cap = args.limit ?? Number.POSITIVE_INFINITY
  let before: string | undefined
  for (;;) {
    const limit = Math.min(SLICE, cap - ids.length - kept.length)
    if (limit <= 0) break
    const done = await sluice.deadLetters.retry({ ...filter, limit, ...(before ? { before } : {}) })
    ids.push(...done.requeued)
    kept.push(...done.kept)
    const answered = [...done.requeued, ...done.kept.map((k) => k.id)]
    if (answered.length < limit) break
    before = answered.reduce((a, b) => (BigInt(a) < BigInt(b) ? a : b))
  }
  const found = new Set([...ids, ...kept.map((k) => k.id)])
  return { action: 'retry', ids, kept, missing: (args.ids ?? []).filter((id) => !found.has(id)) }
}

/** Discards in the library's bounded slices until nothing matches or the limit is reached. */
async function discardAll(sluice: Sluice, filter: DeadLetterQuery, args: Args): Promise<Result> {
  const ids: string[] = []
  const cap = args.limit ?? Number.POSITIVE_INFINITY
  for (;;) {
    const limit = Math.min(SLICE, cap - ids.length)
    if (limit <= 0) break
    const done = await sluice.deadLetters.discard({ ...filter, limit })
    ids.push(...done)
    if (done.length < limit) break
  }
  const found = new Set(ids)
  return { action: 'discard', ids, missing: (args.ids ?? []).filter((id) => !found.has(id)) }
}
