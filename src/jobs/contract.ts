import * as z from 'zod/mini'
import { ConfigError, toIssues } from '../errors.js'
import { firstIssue } from '../json.js'
import { nameSchema } from '../names.js'
import { given, ONCE } from '../validate.js'
import { type AdmissionOptions, admissionSchema } from './admission.js'
import {
  type ConcurrencyOptions,
  concurrencySchema,
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE,
  type InputSchema,
  inputSchemaSchema,
  type JobShape,
  prioritySchema,
  type RetryPolicy,
  resolveControls,
  resolveRetry,
  retryOptionSchema,
  type UniqueOptions,
  uniqueSchema,
} from './define.js'

export interface ContractOptions<S extends InputSchema> {
  name: string
  /** Default `default`. */
  queue?: string
  input: S
  /** Default priority of this job's enqueues (lower runs first). */
  priority?: number
  /** Attempts (a number) or a full policy; enqueue records `maxAttempts`. */
  retry?: number | Partial<RetryPolicy>
  /** Concurrency limit, as on defineJob: enqueue takes the slot, so the contract must carry it. */
  concurrency?: ConcurrencyOptions<z.output<S>>
  /** Uniqueness, as on defineJob: enqueue takes the lock, so the contract must carry it. */
  unique?: UniqueOptions<z.output<S>>
  /** Admission policy, as on defineJob: enqueue stores the partition and its limits, so the contract must carry it. */
  admission?: AdmissionOptions<z.output<S>>
}

/**
 * A job as seen by the code that enqueues it: name, queue, input schema, priority and
 * retry policy, but no handler. Enqueue-only code (an edge function) imports contracts
 * and never pulls in handler code; the worker side defines the job from the same contract:
 * `defineJob({ ...contract, run })`.
 */
export interface JobContract<S extends InputSchema = InputSchema> extends JobShape<S> {
  readonly kind: 'contract'
}

export type AnyContract = JobContract<InputSchema>

const contractSchema = z.lazy(() =>
  z.strictObject({
    name: nameSchema,
    queue: z.optional(nameSchema),
    input: inputSchemaSchema,
    priority: z.optional(prioritySchema),
    retry: given(() => retryOptionSchema),
    concurrency: given(() => concurrencySchema),
    unique: given(() => uniqueSchema),
    admission: given(() => admissionSchema),
    // Present when another contract is spread in: `defineContract({ ...contract, queue })`.
    kind: z.optional(z.literal('contract')),
  }),
)

/** Declares a job contract: what enqueueing a job needs, without its handler. */
export function defineContract<S extends InputSchema>(options: ContractOptions<S>): JobContract<S> {
  const parsed = contractSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    const name = typeof options?.name === 'string' ? ` "${options.name}"` : ''
    throw new ConfigError(
      `Invalid job contract${name}${firstIssue(parsed.error.issues)}`,
      toIssues(parsed.error.issues),
    )
  }
  return Object.freeze({
    kind: 'contract' as const,
    name: options.name,
    queue: options.queue ?? DEFAULT_QUEUE,
    input: options.input,
    priority: options.priority ?? DEFAULT_PRIORITY,
    retry: resolveRetry(options.retry),
    ...resolveControls(options),
  })
}

export function isContract(value: unknown): value is AnyContract {
  return typeof value === 'object' && value !== null && (value as AnyContract).kind === 'contract'
}

/**
 * Throws unless `contract` describes `job` the same way: a contract whose queue, priority
 * or attempts differ would enqueue different rows from the edge than from the job itself.
 */
export function assertContractMatches(contract: JobShape, job: JobShape): void {
  const differs: string[] = []
  if (contract.queue !== job.queue) differs.push('queue')
  if (contract.priority !== job.priority) differs.push('priority')
  const c = contract.concurrency
  const k = job.concurrency
  if (!!c !== !!k || (c && k && (c.limit !== k.limit || c.onConflict !== k.onConflict)))
    differs.push('concurrency')
  const u = contract.unique
  const v = job.unique
  if (!!u !== !!v || (u && v && (u.strategy !== v.strategy || u.onConflict !== v.onConflict)))
    differs.push('unique')
  if (contract.retry.maxAttempts !== job.retry.maxAttempts) differs.push('retry.maxAttempts')
  if (differs.length > 0) {
    throw new ConfigError(
      `The contract for job "${job.name}" disagrees with the registered job on ${differs.join(', ')}: ` +
        'define the job from the contract (`defineJob({ ...contract, run })`).',
    )
  }
}
