import * as z from 'zod'
import { partitionKeySchema, policyNameSchema } from '../../controls/partitions.js'
import { closest } from '../../names.js'
import type { Sluice } from '../../sluice.js'
import { type PartitionRow, PENDING_COUNT_LIMIT, type PolicyRow } from '../../sql/admission.js'
import { intFlag, validate } from '../args.js'
import { defineCommand, noPositionals } from '../command.js'
import { CliError, EXIT, UsageError } from '../errors.js'
import { duration, table, truncate } from '../output.js'

/** A partition key as a cell or in a sentence: quoted when empty or when it holds spaces, quotes or controls. */
export function shownKey(key: string): string {
  const quoted = key === '' || /[\s"'\\\p{Cc}]/u.test(key) ? JSON.stringify(key) : key
  return truncate(quoted, 60)
}

const count = (n: number): number | string => (n >= PENDING_COUNT_LIMIT ? `≥${PENDING_COUNT_LIMIT}` : n)

export function policyTable(policies: readonly PolicyRow[]): string {
  return table(
    ['policy', 'queue', 'partitions', 'paused', 'pending', 'in flight', 'global cap'],
    policies.map((p) => [
      p.name,
      p.queue,
      p.partitions,
      p.pausedPartitions,
      count(p.pending),
      p.inFlight,
      p.globalMax ?? '—',
    ]),
  )
}

export function partitionTable(partitions: readonly PartitionRow[]): string {
  return table(
    ['partition', 'pending', 'in flight', 'cap', 'tokens', 'lag', 'paused', 'why not running'],
    partitions.map((p) => [
      shownKey(p.partition),
      count(p.pending),
      p.inFlight,
      p.cap === null ? '—' : p.capOverride === null ? p.cap : `${p.cap} (set)`,
      p.tokens === null ? '—' : p.tokens.toFixed(1),
      p.ewmaLagMs === null ? '—' : duration(p.ewmaLagMs),
      p.paused ? 'yes' : 'no',
      p.reason ?? (p.pending > 0 ? '— (admissible)' : '—'),
    ]),
  )
}

export const policies = defineCommand<Record<string, never>, { policies: PolicyRow[] }>({
  name: 'policies',
  summary: 'admission policies: partitions, paused partitions, jobs waiting and running, global cap',
  usage: 'sluice policies',
  help: `Per admission policy (a job's \`admission\` option): its queue, how many partitions it has
and how many of them are paused by hand, its jobs waiting (due or scheduled, counted up to
${PENDING_COUNT_LIMIT}) and running, and its global cap. One statement.

See a policy's partitions, and why they wait, with \`sluice partitions <policy>\`.`,
  options: {},
  needsSchema: true,
  parse(parsed) {
    noPositionals('policies', parsed)
    return {}
  },
  run: async ({ sluice }) => ({ policies: await sluice.inspect.policies() }),
  render: (r) => (r.policies.length ? policyTable(r.policies) : 'No admission policies.'),
})

type Args =
  | { action: 'list'; policy: string; limit: number; offset: number }
  | { action: 'pause' | 'resume'; policy: string; partition: string }
  | { action: 'cap'; policy: string; partition: string; cap: number | null }

type Result =
  | { action: 'list'; policy: string; partitions: PartitionRow[] }
  | { action: 'pause' | 'resume'; policy: string; partition: string }
  | { action: 'cap'; policy: string; partition: string; cap: number | null }

const flags = z.object({
  limit: intFlag(1, 1000).optional(),
  offset: intFlag(0, 100_000_000).optional(),
  pause: z.string().optional(),
  resume: z.string().optional(),
  cap: z.string().optional(),
})

const MAX_CAP = 1_000_000

function partitionArg(flag: string, value: string): string {
  const parsed = partitionKeySchema.safeParse(value)
  if (!parsed.success) throw new UsageError(`--${flag}: the partition ${parsed.error.issues[0]?.message}.`)
  return parsed.data
}

/** `--cap <partition>=<n|none>`: split at the last "=", as a key may hold one. */
function capArg(value: string): { partition: string; cap: number | null } {
  const at = value.lastIndexOf('=')
  const hint = 'Example: sluice partitions send --cap acct-42=3 (or =none to clear it).'
  if (at < 0) throw new UsageError('--cap takes <partition>=<n|none>.', hint)
  const partition = partitionArg('cap', value.slice(0, at))
  const n = value.slice(at + 1)
  if (n === 'none') return { partition, cap: null }
  if (!/^[0-9]{1,7}$/.test(n) || Number(n) > MAX_CAP)
    throw new UsageError(`--cap: the cap must be a whole number from 0 to ${MAX_CAP}, or none.`, hint)
  return { partition, cap: Number(n) }
}

/** An unknown policy or partition, as a usage error with the closest names known. */
async function notFound(sluice: Sluice, policy: string, partition?: string): Promise<CliError> {
  const known = (await sluice.inspect.policies()).map((p) => p.name)
  if (!known.includes(policy)) {
    const guess = closest(policy, known)
    return new CliError(`No admission policy named "${policy}".`, {
      code: 'NOT_FOUND',
      exitCode: EXIT.USAGE,
      hint: `${guess ? `Did you mean "${guess}"? ` : ''}Policies: ${known.join(', ') || '(none)'}.`,
    })
  }
  const keys = (await sluice.inspect.partitions(policy, { limit: 1000 })).map((p) => p.partition)
  const guess = partition === undefined ? undefined : closest(partition, keys)
  return new CliError(`No partition ${shownKey(partition ?? '')} of admission policy "${policy}".`, {
    code: 'NOT_FOUND',
    exitCode: EXIT.USAGE,
    hint: `${guess !== undefined ? `Did you mean ${shownKey(guess)}? ` : ''}A partition exists once a job was enqueued into it: \`sluice partitions ${policy}\` lists them.`,
  })
}

export const partitions = defineCommand<Args, Result>({
  name: 'partitions',
  summary: "an admission policy's partitions and why they wait; pause, resume or cap one",
  usage:
    'sluice partitions <policy> [--limit n] [--offset n] | --pause <p> | --resume <p> | --cap <p>=<n|none>',
  help: `Lists a policy's partitions in key order, each with its jobs waiting (counted up to
${PENDING_COUNT_LIMIT}) and running, its cap on running jobs ("(set)" when set by hand), its throttle
tokens, the lag from admission to start, whether it is paused, and why its next waiting job
is not running: queue paused, breaker open, partition paused, slowed down (the service asked),
not due yet, throttled, at its cap, at the global cap. One statement.

  --limit n              at most this many partitions (1..1000, default 100)
  --offset n             skip this many
  --pause <p>            drains admit none of partition p's jobs until it is resumed
  --resume <p>           lift the pause
  --cap <p>=<n|none>     cap p's running jobs at n (0: admit none), over its concurrency and
                         adaptive cap; none clears it

A policy without a partition function has one partition, the empty key: --pause ''.`,
  options: {
    limit: { type: 'string' },
    offset: { type: 'string' },
    pause: { type: 'string' },
    resume: { type: 'string' },
    cap: { type: 'string' },
  },
  needsSchema: true,
  parse({ positionals, values }) {
    const [policy, ...extra] = positionals
    if (policy === undefined)
      throw new UsageError('partitions needs a policy name.', 'Example: sluice partitions send-email')
    if (extra.length)
      throw new UsageError(`Unexpected argument "${extra[0]}".`, 'sluice partitions takes one policy.')
    const name = policyNameSchema.safeParse(policy)
    if (!name.success) throw new UsageError(`The policy name ${name.error.issues[0]?.message}.`)
    const v = validate('partitions', flags, values)
    const actions = (['pause', 'resume', 'cap'] as const).filter((a) => v[a] !== undefined)
    if (actions.length > 1)
      throw new UsageError(`--${actions[0]} and --${actions[1]} do not combine: one change at a time.`)
    const action = actions[0]
    if (action && (v.limit !== undefined || v.offset !== undefined))
      throw new UsageError(`--limit and --offset are for listing; they do not combine with --${action}.`)
    if (action === 'cap') return { action, policy: name.data, ...capArg(v.cap!) }
    if (action) return { action, policy: name.data, partition: partitionArg(action, v[action]!) }
    return { action: 'list', policy: name.data, limit: v.limit ?? 100, offset: v.offset ?? 0 }
  },
  async run({ sluice }, args) {
    if (args.action === 'list') {
      const rows = await sluice.inspect.partitions(args.policy, { limit: args.limit, offset: args.offset })
      if (rows.length === 0 && args.offset === 0) throw await notFound(sluice, args.policy)
      return { action: 'list', policy: args.policy, partitions: rows }
    }
    try {
      if (args.action === 'cap') await sluice.setPartitionCap(args.policy, args.partition, args.cap)
      else if (args.action === 'pause') await sluice.pausePartition(args.policy, args.partition)
      else await sluice.resumePartition(args.policy, args.partition)
    } catch (error) {
      if ((error as { code?: unknown }).code === 'NOT_FOUND')
        throw await notFound(sluice, args.policy, args.partition)
      throw error
    }
    return args
  },
  render(r) {
    if (r.action === 'list') {
      return r.partitions.length ? partitionTable(r.partitions) : `No more partitions of policy ${r.policy}.`
    }
    const p = `partition ${shownKey(r.partition)} of policy ${r.policy}`
    if (r.action !== 'cap')
      return r.action === 'pause'
        ? `Paused ${p}: drains admit none of its jobs until it is resumed.`
        : `Resumed ${p}.`
    if (r.cap === null) return `Cleared the cap of ${p}: its concurrency and adaptive cap apply again.`
    return r.cap === 0
      ? `Capped ${p} at 0: drains admit none of its jobs until the cap is raised or cleared.`
      : `Capped ${p} at ${r.cap} running job${r.cap === 1 ? '' : 's'}.`
  },
})
