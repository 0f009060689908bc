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
    text: `${cte}SELECT s.completed, s.retried, s.dead, s.handed_back, s.ready, k.*,
  (extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)::float8 AS server_ms
FROM ${call} s
LEFT JOIN LATERAL (SELECT c.* FROM ${source.text} WHERE s.completed IS NOT NULL) k ON true`,
    values: [...values, ...source.values],
  }
}

/** The settle's completions as settle_completions (migrations/functions/settle_records.sql) reads them: one array per column. */
export function encodeCompletions(completions: readonly Completion[]): unknown[][] {
  const n = completions.length
  const id = new Array<string>(n)
  const token = new Array<string>(n)
  const status = new Array<string>(n)
  const durationMs = new Array<number | null>(n)
  const waitMs = new Array<number>(n)
  const lagMs = new Array<number | null>(n)
  for (let i = 0; i < n; i++) {
    const c = completions[i]!
    id[i] = c.id
    token[i] = c.token
    status[i] = c.status
    durationMs[i] = c.durationMs
    waitMs[i] = c.waitMs
    lagMs[i] = c.lagMs ?? null
  }
  return [id, token, status, durationMs, waitMs, lagMs]
}

/** The settle's failures as settle_failures (migrations/functions/settle_records.sql) reads them: one array per column. */
export function encodeFailures(failures: readonly Failure[]): unknown[][] {
  const n = failures.length
  const id = new Array<string>(n)
  const token = new Array<string>(n)
  const name = new Array<string>(n)
  const message = new Array<string>(n)
  const code = new Array<string | null>(n)
  const delayMs = new Array<number>(n)
  const final = new Array<boolean>(n)
  const keepPlace = new Array<string | null>(n)
  const durationMs = new Array<number | null>(n)
  const waitMs = new Array<number>(n)
  const lagMs = new Array<number | null>(n)
  const slowDownMs = new Array<number | null>(n)
  for (let i = 0; i < n; i++) {
    const f = failures[i]!
    id[i] = f.id
    token[i] = f.token
    name[i] = f.error.name
    message[i] = f.error.message
    code[i] = f.error.code ?? null
    delayMs[i] = Math.round(f.delayMs)
    final[i] = f.final
    keepPlace[i] = f.keepPlace?.toISOString() ?? null
    durationMs[i] = f.durationMs
    waitMs[i] = f.waitMs
    lagMs[i] = f.lagMs ?? null
    slowDownMs[i] = f.slowDownMs ?? null
  }
  return [id, token, name, message, code, delayMs, final, keepPlace, durationMs, waitMs, lagMs, slowDownMs]
}

/** The settle's hand-backs as settle_hand_backs (migrations/functions/settle_records.sql) reads them: one array per column. */
export function encodeHandBacks(handBacks: readonly HandBack[]): unknown[][] {
  const n = handBacks.length
  const id = new Array<string>(n)
  const token = new Array<string>(n)
  const dueAt = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    const h = handBacks[i]!
    id[i] = h.id
    token[i] = h.token
    dueAt[i] = h.dueAt.toISOString()
  }
  return [id, token, dueAt]
}

/**
 * The SQL types of each record list's arrays, in order: the parameters of settle_completions,
 * settle_failures and settle_hand_backs (migrations/functions/settle_records.sql), and of the
 * settle function (migrations/functions/settle.sql), which takes the three lists in turn.
 */
export const SETTLE_RECORD_TYPES = {
  settle_completions: ['bigint[]', 'uuid[]', 'text[]', 'bigint[]', 'bigint[]', 'bigint[]'],
  settle_failures: [
    'bigint[]',
    'uuid[]',
    'text[]',
    'text[]',
    'text[]',
    'bigint[]',
    'boolean[]',
    'timestamptz[]',
    'bigint[]',
    'bigint[]',
    'bigint[]',
    'bigint[]',
  ],
  settle_hand_backs: ['bigint[]', 'uuid[]', 'timestamptz[]'],
} as const
const OK_TYPES = SETTLE_RECORD_TYPES.settle_completions
const KO_TYPES = SETTLE_RECORD_TYPES.settle_failures
const BACK_TYPES = SETTLE_RECORD_TYPES.settle_hand_backs
const OK_AT = 1
const KO_AT = OK_AT + OK_TYPES.length
const BACK_AT = KO_AT + KO_TYPES.length
const INVOCATION_AT = BACK_AT + BACK_TYPES.length

/** `$n::type` for each of `types`, numbered from `from`. */
const casts = (types: readonly string[], from: number): string[] =>
  types.map((type, i) => `$${from + i}::${type}`)

const OK_PARAMS = casts(OK_TYPES, OK_AT).join(', ')
const KO_PARAMS = casts(KO_TYPES, KO_AT).join(', ')
const [BACK_ID, BACK_TOKEN, BACK_DUE_AT] = casts(BACK_TYPES, BACK_AT) as [string, string, string]
const TAIL_PARAMS = `$${INVOCATION_AT}::text, $${INVOCATION_AT + 1}::boolean, $${INVOCATION_AT + 2}::text[]`

function settleParts(t: string, p: SettleParams): { cte: string; call: string; values: unknown[] } {
  const values: unknown[] = [
    ...encodeCompletions(p.completions),
    ...encodeFailures(p.failures),
    ...encodeHandBacks(p.handBacks),
    p.finish?.invocationId ?? null,
    p.finish !== undefined,
    p.finish?.queues ?? [],
  ]
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
  let back = `${BACK_ID}, ${BACK_TOKEN}, ${BACK_DUE_AT}`
  if (p.finish?.sweep) {
    // Jobs still leased to this invocation that this settle does not name were taken by a claim
    // whose reply never arrived: they go back with the rest, due now, attempt uncounted.
    ctes.push(`orphans AS (
  SELECT coalesce(array_agg(j.id), '{}') AS ids, coalesce(array_agg(j.lease_token), '{}') AS tokens,
         coalesce(array_agg(now()), '{}') AS due
  FROM ${t}.jobs j
  WHERE j.leased_by = $${INVOCATION_AT}::text AND j.lease_token IS NOT NULL
    AND j.id <> ALL ($${OK_AT}::bigint[] || $${KO_AT}::bigint[] || ${BACK_ID})
)`)
    back = `${BACK_ID} || (SELECT ids FROM orphans), ${BACK_TOKEN} || (SELECT tokens FROM orphans),
  ${BACK_DUE_AT} || (SELECT due FROM orphans)`
  }
  const call = `${t}.settle(${OK_PARAMS},
  ${KO_PARAMS},
  ${back}, ${TAIL_PARAMS})`
  return { cte: ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : '', call, values }
}
