import type { Statement } from '../db/types.js'
import { type ClaimParams, type ClaimRow, claimSource } from './claim.js'

export interface Completion {
  id: string
  token: string
  status: 'completed' | 'expired'
  durationMs: number | null
  /** How long the job waited once due. */
  waitMs: number
  /** From the claim that admitted it to its start (null when unknown). */
  lagMs?: number | null
  /** A subscriber's run that completed: recorded as processed by the settle statement. */
  mark?: { eventId: string; subscriber: string }
  /** The handler's return value as JSON text, stored with the archived job; absent when it returned nothing. */
  result?: string
}

export interface Failure {
  id: string
  token: string
  /** `code` is set for Sluice's own errors. */
  error: { name: string; message: string; code?: string }
  /** Backoff before the next attempt. */
  delayMs: number
  /** Dead-letter now, whatever attempts remain. */
  final: boolean
  durationMs: number | null
  waitMs: number
  lagMs?: number | null
  /** A handler's SlowDownError: its partition admits nothing for this long. */
  slowDownMs?: number
  /** Set for single-consumer queues: the job keeps its place and the queue is held instead. */
  keepPlace?: Date
}

export interface HandBack {
  id: string
  token: string
  /** When the job was due before it was claimed: it keeps its place in the queue. */
  dueAt: Date
}

export interface SettleParams {
  completions: readonly Completion[]
  failures: readonly Failure[]
  handBacks: readonly HandBack[]
  /** Present on a drain's last statement: deregister the invocation and count what is left. */
  finish?: {
    invocationId: string
    queues: readonly string[]
    /**
     * Also hand back every job still leased to this invocation that this settle does not name:
     * jobs taken by a claim whose reply was lost with its connection (see SettleRow.swept).
     */
    sweep?: boolean
  }
}

export interface SettleRow {
  completed: number
  retried: number
  dead: number
  handed_back: number
  /** Due jobs left in the drained queues, counted up to READY_CAP; null unless finishing. */
  ready: number | null
  /** With `finish.sweep`: how many of handed_back were jobs a lost claim had taken. */
  swept?: number
  /** The queues of parents that the ends of their invoked children made due; null when none. */
  resumed: string[] | null
}

export const READY_CAP = 1000

/**
 * Settles a batch in one call of the settle function (migrations/functions/settle.sql). Every
 * row is matched on (id, lease token), so a late ack from a drain whose lease ran out changes
 * nothing. Completed and expired jobs move to the archive; failed ones are rescheduled with
 * their backoff or, out of attempts (or failed permanently), moved to the dead letters with
 * their error history; unstarted ones are handed back with the attempt uncounted. Slots,
 * locks, batch counters, circuit breakers and job stats are updated on the way.
 */
export function settle(t: string, p: SettleParams): Statement {
  const { cte, call, values } = settleParts(t, p)
  if (!p.finish?.sweep) return { text: `${cte}SELECT * FROM ${call}`, values }
  return {
    text: `${cte}SELECT s.*, cardinality((SELECT ids FROM orphans)) AS swept FROM ${call} s`,
    values,
  }
}

/**
 * A settle followed by a claim: the settle's counts on every row, then a claim row (see ClaimRow),
 * or nulls when the claim returned none.
 */
export type SettleAndClaimRow = SettleRow &
  (ClaimRow | { id: null; queue: null; name: null; more: null }) & {
    /** The statement's time on the server, ms, up to the row (the drain subtracts it from the round trip). */
    server_ms: number
  }

/**
 * Settles one batch and claims the next in one statement: the settle function runs first
 * (the lateral claim depends on its row), so the claim sees the slots, locks and breaker
 * state the settle left. Every row carries the settle's counts; with nothing claimed there
 * is one row whose job columns are null.
 */
export function settleAndClaim(t: string, s: SettleParams, c: ClaimParams): Statement {
  const { cte, call, values } = settleParts(t, s)
  const source = claimSource(t, c, values.length)
  return {
    text: `${cte}SELECT s.completed, s.retried, s.dead, s.handed_back, s.ready, s.resumed, k.*,
  (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 AS server_ms
FROM ${call} s
LEFT JOIN LATERAL (SELECT c.* FROM ${source.text} WHERE s.completed IS NOT NULL) k ON true`,
    values: [...values, ...source.values],
  }
}

/**
 * One column of a record list as the settle function takes it: the function's parameter, its
 * SQL array type, and what each record puts in it.
 */
interface Column<R> {
  param: string
  type: string
  value: (record: R) => unknown
}

/**
 * Each record list's columns, in the order its decoder (settle_completions, settle_failures,
 * settle_hand_backs in migrations/functions/settle_records.sql) and the settle function take
 * them: the only list of them on the client, which the statement, the encoders and the types
 * follow. test/core/settle-records.test.ts compares it with both functions' signatures.
 */
export const SETTLE_COLUMNS = {
  settle_completions: [
    { param: 'p_ok_id', type: 'bigint[]', value: (c) => c.id },
    { param: 'p_ok_token', type: 'uuid[]', value: (c) => c.token },
    { param: 'p_ok_status', type: 'text[]', value: (c) => c.status },
    { param: 'p_ok_duration_ms', type: 'bigint[]', value: (c) => c.durationMs },
    { param: 'p_ok_wait_ms', type: 'bigint[]', value: (c) => c.waitMs },
    { param: 'p_ok_lag_ms', type: 'bigint[]', value: (c) => c.lagMs ?? null },
    { param: 'p_ok_result', type: 'text[]', value: (c) => c.result ?? null },
  ] satisfies Column<Completion>[],
  settle_failures: [
    { param: 'p_ko_id', type: 'bigint[]', value: (f) => f.id },
    { param: 'p_ko_token', type: 'uuid[]', value: (f) => f.token },
    { param: 'p_ko_error_name', type: 'text[]', value: (f) => f.error.name },
    { param: 'p_ko_error_message', type: 'text[]', value: (f) => f.error.message },
    { param: 'p_ko_error_code', type: 'text[]', value: (f) => f.error.code ?? null },
    { param: 'p_ko_delay_ms', type: 'bigint[]', value: (f) => Math.round(f.delayMs) },
    { param: 'p_ko_final', type: 'boolean[]', value: (f) => f.final },
    { param: 'p_ko_keep_place', type: 'timestamptz[]', value: (f) => f.keepPlace?.toISOString() ?? null },
    { param: 'p_ko_duration_ms', type: 'bigint[]', value: (f) => f.durationMs },
    { param: 'p_ko_wait_ms', type: 'bigint[]', value: (f) => f.waitMs },
    { param: 'p_ko_lag_ms', type: 'bigint[]', value: (f) => f.lagMs ?? null },
    { param: 'p_ko_slow_down_ms', type: 'bigint[]', value: (f) => f.slowDownMs ?? null },
  ] satisfies Column<Failure>[],
  settle_hand_backs: [
    { param: 'p_back_id', type: 'bigint[]', value: (h) => h.id },
    { param: 'p_back_token', type: 'uuid[]', value: (h) => h.token },
    { param: 'p_back_due_at', type: 'timestamptz[]', value: (h) => h.dueAt.toISOString() },
  ] satisfies Column<HandBack>[],
}

/** One array per column of `columns`, filled from `records`. */
function encode<R>(columns: readonly Column<R>[], records: readonly R[]): unknown[][] {
  return columns.map((column) => {
    const out = new Array<unknown>(records.length)
    for (let i = 0; i < records.length; i++) out[i] = column.value(records[i]!)
    return out
  })
}

/** The settle's completions as settle_completions (migrations/functions/settle_records.sql) reads them: one array per column. */
export const encodeCompletions = (completions: readonly Completion[]): unknown[][] =>
  encode(SETTLE_COLUMNS.settle_completions, completions)

/** The settle's failures as settle_failures reads them: one array per column. */
export const encodeFailures = (failures: readonly Failure[]): unknown[][] =>
  encode(SETTLE_COLUMNS.settle_failures, failures)

/** The settle's hand-backs as settle_hand_backs reads them: one array per column. */
export const encodeHandBacks = (handBacks: readonly HandBack[]): unknown[][] =>
  encode(SETTLE_COLUMNS.settle_hand_backs, handBacks)

/** The SQL types of each record list's arrays, in its decoder's order. */
export const SETTLE_RECORD_TYPES = Object.fromEntries(
  Object.entries(SETTLE_COLUMNS).map(([decoder, columns]) => [decoder, columns.map((c) => c.type)]),
) as unknown as Record<keyof typeof SETTLE_COLUMNS, readonly string[]>

function settleParts(t: string, p: SettleParams): { cte: string; call: string; values: unknown[] } {
  const values: unknown[] = []
  /** Each parameter of the settle function and what the call passes it: `$n::type` at first. */
  const args = new Map<string, string>()
  const bind = (param: string, type: string, value: unknown): void => {
    values.push(value)
    args.set(param, `$${values.length}::${type}`)
  }
  const lists = [
    [SETTLE_COLUMNS.settle_completions, encodeCompletions(p.completions)],
    [SETTLE_COLUMNS.settle_failures, encodeFailures(p.failures)],
    [SETTLE_COLUMNS.settle_hand_backs, encodeHandBacks(p.handBacks)],
  ] as const
  for (const [columns, arrays] of lists) {
    columns.forEach((c, i) => {
      bind(c.param, c.type, arrays[i])
    })
  }
  bind('p_invocation', 'text', p.finish?.invocationId ?? null)
  bind('p_finish', 'boolean', p.finish !== undefined)
  bind('p_queues', 'text[]', p.finish?.queues ?? [])
  const placeholder = (param: string): string => args.get(param)!
  const ctes: string[] = []
  let events: string[] | undefined
  let subscribers: string[] | undefined
  for (const c of p.completions) {
    if (c.status !== 'completed' || !c.mark) continue
    events ??= []
    subscribers ??= []
    events.push(c.mark.eventId)
    subscribers.push(c.mark.subscriber)
  }
  if (events && subscribers) {
    // Subscribers' completed runs are marked processed in the same statement. A run whose lease
    // was lost is marked too: its handler did run to completion. Key order, as every writer of
    // marks takes them, so two settles never wait on each other in a cycle.
    values.push(events, subscribers)
    ctes.push(`marked AS (
  INSERT INTO ${t}.processed_events (event_id, subscriber)
  SELECT DISTINCT m.e, m.s FROM unnest($${values.length - 1}::text[], $${values.length}::text[]) AS m(e, s)
  ORDER BY 1, 2
  ON CONFLICT DO NOTHING
  RETURNING 1
)`)
  }
  if (p.finish?.sweep) {
    // Jobs still leased to this invocation that this settle does not name were taken by a claim
    // whose reply never arrived: they go back with the rest, attempt uncounted, at their place
    // (which a lease keeps), found on their lease rows (the view leased_jobs).
    ctes.push(`orphans AS (
  SELECT coalesce(array_agg(j.id), '{}') AS ids, coalesce(array_agg(j.token), '{}') AS tokens,
         coalesce(array_agg(j.run_at), '{}') AS due
  FROM ${t}.leased_jobs j
  WHERE j.leased_by = ${placeholder('p_invocation')}
    AND j.id <> ALL (${placeholder('p_ok_id')} || ${placeholder('p_ko_id')} || ${placeholder('p_back_id')})
)`)
    args.set('p_back_id', `${placeholder('p_back_id')} || (SELECT ids FROM orphans)`)
    args.set('p_back_token', `${placeholder('p_back_token')} || (SELECT tokens FROM orphans)`)
    args.set('p_back_due_at', `${placeholder('p_back_due_at')} || (SELECT due FROM orphans)`)
  }
  // In the order of the settle function's parameters, which is this table's (a test reads the
  // function's signature and compares): positional, so that the statement's text stays short.
  const call = `${t}.settle(${[...args.values()].join(', ')})`
  return { cte: ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : '', call, values }
}
