/**
 * Admission policies: the gates a job's runs pass through at claim time (throttle, concurrency,
 * global cap, fair interleave, adaptive concurrency) and its dedupe key. The claim statement
 * decides them (migrations/functions/admission_claim.sql, on the gates of admission.sql); this module declares and validates them and
 * computes, at enqueue, what each job stores (its partition and the numbers taken from its input).
 */
import * as z from 'zod/mini'
import { ConfigError } from '../errors.js'
import type { AdmissionRow } from '../sql/enqueue.js'

/** A function of the validated input, checked bivariantly (as a method is) so that jobs of any input fit JobShape. */
type FromInput<I, R> = { bivariant(input: I): R }['bivariant']

/** A number, or one computed from the validated input at enqueue (stored with the partition). */
export type PerInput<I> = number | FromInput<I, number>

export interface AdmissionOptions<I> {
  /** The partition a job belongs to, from its input (e.g. an account or endpoint id). Default: one partition. */
  partition?: FromInput<I, string>
  /** Token bucket per partition: `rate` runs per `per` ms, at most `burst` at once (default `rate`). */
  throttle?: { rate: PerInput<I>; per: number; burst?: PerInput<I> }
  /** At most `max` admitted and unfinished jobs per partition. */
  concurrency?: { max: PerInput<I> }
  /** At most `max` admitted and unfinished jobs across all partitions of the policy. */
  globalCap?: { max: number }
  /** Each partition gets up to `quantum` jobs per claim (default 1) before the rest of the room goes by age. */
  fair?: { quantum?: number } | true
  /**
   * A per-partition cap that tunes itself: +1 per success whose admitted-to-started lag was within
   * `targetLagMs` (default 1000), ×0.95 while the lag's EWMA is over it, ×0.5 on a failure or a
   * SlowDownError; never under `min` (default 1) or over `max` (default none). Starts at `initial` (default 3).
   */
  adaptive?: { min?: number; max?: number; initial?: number; targetLagMs?: number }
  /** A second enqueue with the same key is dropped while the first is queued or running; null: no dedupe. */
  dedupe?: FromInput<I, string | null | undefined>
}

const fn = (what: string) =>
  z.custom<(input: unknown) => unknown>((v) => typeof v === 'function', `${what} must be a function`)
const perInput = (max: number) =>
  z.union([z.number().check(z.positive(), z.maximum(max)), fn('a computed limit')])
const count = () => z.int().check(z.minimum(1), z.maximum(1_000_000))

/** The policy's object schema; `admissionSchema` builds it at its first parse (see validate.ts). */
const admissionObject = () =>
  z.strictObject({
    partition: z.optional(fn('partition')),
    throttle: z.optional(
      z.strictObject({
        rate: perInput(1_000_000),
        per: z.int().check(z.minimum(1), z.maximum(86_400_000)),
        burst: z.optional(perInput(1_000_000)),
      }),
    ),
    concurrency: z.optional(z.strictObject({ max: perInput(1_000_000) })),
    globalCap: z.optional(z.strictObject({ max: count() })),
    fair: z.optional(z.union([z.literal(true), z.strictObject({ quantum: z.optional(count()) })])),
    adaptive: z.optional(
      z
        .strictObject({
          min: z.optional(count()),
          max: z.optional(count()),
          initial: z.optional(count()),
          targetLagMs: z.optional(z.int().check(z.minimum(1), z.maximum(86_400_000))),
        })
        .check(
          z.refine(
            (a) => a.max === undefined || a.max >= (a.min ?? 1),
            'adaptive.max must be at least adaptive.min',
          ),
        ),
    ),
    dedupe: z.optional(fn('dedupe')),
  })

export const admissionSchema = z.lazy(admissionObject)

/** A declared policy, as validated (defaults are applied per job by admissionRow). Its name is its job's. */
export type AdmissionPolicy<I = unknown> = Readonly<AdmissionOptions<I>>

export function resolveAdmission<I>(
  options: AdmissionOptions<I> | undefined,
): AdmissionPolicy<I> | undefined {
  return options ? Object.freeze({ ...options }) : undefined
}

/** Thrown (as the caller's ValidationError) when a computed value is unusable. */
export type Refuse = (what: string, value: unknown) => never

/** The row a job with this policy stores, computed from its validated input, defaults filled in. */
export function admissionRow<I>(
  name: string,
  policy: AdmissionPolicy<I>,
  input: I,
  refuse: Refuse,
): AdmissionRow {
  const computed = (what: string, value: PerInput<I>, min: number, integer: boolean): number => {
    const n = typeof value === 'function' ? value(input) : value
    if (
      typeof n !== 'number' ||
      !Number.isFinite(n) ||
      n < min ||
      n > 1_000_000 ||
      (integer && !Number.isInteger(n))
    ) {
      refuse(what, n)
    }
    return n
  }
  let partition = ''
  if (policy.partition) {
    const key = policy.partition(input)
    if (typeof key !== 'string' || key.length > 512 || key.includes('\u0000'))
      refuse('admission.partition', key)
    partition = key
  }
  const t = policy.throttle
  const rate = t ? computed('admission.throttle.rate', t.rate, Number.MIN_VALUE, false) : null
  const burst = t
    ? t.burst === undefined
      ? Math.max(1, rate ?? 1)
      : computed('admission.throttle.burst', t.burst, 1, false)
    : null
  const a = policy.adaptive
  const min = a?.min ?? 1
  return {
    policy: name,
    partition,
    globalMax: policy.globalCap?.max ?? null,
    rate,
    perMs: t ? t.per : null,
    burst,
    maxInFlight: policy.concurrency
      ? computed('admission.concurrency.max', policy.concurrency.max, 1, true)
      : null,
    quantum: policy.fair === undefined ? null : policy.fair === true ? 1 : (policy.fair.quantum ?? 1),
    adaptiveMin: a ? min : null,
    adaptiveMax: a?.max ?? null,
    adaptiveInitial: a ? Math.min(a.max ?? Number.POSITIVE_INFINITY, Math.max(min, a.initial ?? 3)) : null,
    targetLagMs: a ? (a.targetLagMs ?? 1_000) : null,
  }
}

/** The until-executed uniqueness key a dedupe key becomes (null: no dedupe). */
export function dedupeKey<I>(
  name: string,
  policy: AdmissionPolicy<I>,
  input: I,
  refuse: Refuse,
): string | null {
  if (!policy.dedupe) return null
  const key = policy.dedupe(input)
  if (key === null || key === undefined) return null
  if (typeof key !== 'string' || key.length === 0 || key.length > 512 || key.includes('\u0000')) {
    refuse('admission.dedupe', key)
  }
  return `dedupe:${name}:${key}`
}

/**
 * A subscriber's admission policy. Publish writes a subscriber's jobs in SQL, so its settings are
 * constants and its partition key is read from the event: a field of the payload (`path`, dotted)
 * or a header. Dedupe needs no key: each event is delivered to a subscriber once.
 */
export interface SubscriberAdmissionOptions {
  /** Where the partition key is read from; default one partition. A missing field is the partition `''`. */
  partition?: { path: string } | { header: string }
  throttle?: { rate: number; per: number; burst?: number }
  concurrency?: { max: number }
  globalCap?: { max: number }
  fair?: { quantum?: number } | true
  adaptive?: { min?: number; max?: number; initial?: number; targetLagMs?: number }
}

// Pure: bundles without subscribers (the edge one) leave them out.
const keyPart = () => z.string().check(z.minLength(1), z.maxLength(200))
export const subscriberAdmissionSchema = /* @__PURE__ */ z.lazy(() =>
  z.extend(z.omit(admissionObject(), { partition: true, dedupe: true }), {
    partition: z.optional(
      z.union([z.strictObject({ path: keyPart() }), z.strictObject({ header: keyPart() })]),
    ),
    throttle: z.optional(
      z.strictObject({
        rate: z.number().check(z.positive(), z.maximum(1_000_000)),
        per: z.int().check(z.minimum(1), z.maximum(86_400_000)),
        burst: z.optional(z.number().check(z.minimum(1), z.maximum(1_000_000))),
      }),
    ),
    concurrency: z.optional(z.strictObject({ max: count() })),
  }),
)

/** What the subscriptions table stores for a subscriber's policy (publish_events reads it). */
export function subscriberAdmissionRecord(
  name: string,
  options: SubscriberAdmissionOptions,
): Record<string, unknown> {
  const refuse: Refuse = (what) => {
    throw new ConfigError(`The ${what} of subscriber "${name}" is invalid`)
  }
  const { partition, ...gates } = options
  const row = admissionRow(name, gates, undefined, refuse)
  return {
    partition_path: partition && 'path' in partition ? partition.path : null,
    partition_header: partition && 'header' in partition ? partition.header : null,
    global_max: row.globalMax,
    rate: row.rate,
    per_ms: row.perMs,
    burst: row.burst,
    max_in_flight: row.maxInFlight,
    quantum: row.quantum,
    adaptive_min: row.adaptiveMin,
    adaptive_max: row.adaptiveMax,
    adaptive_initial: row.adaptiveInitial,
    target_lag_ms: row.targetLagMs,
  }
}
